# plots/gradientflow-table2.gp: GradientFlow Table 2 as bars: throughput
# speedup over the MPI baseline as the optimizations are added, paper
# beside gradsim, on Cluster-P (left) and Cluster-V (right).
name = 'gradientflow-table2'
W = 1200; H = 520
load lib
X = "'MPI' 'NCCL' 'NCCL\n+MP' 'NCCL+MP\n+Overlap' 'NCCL+MP\n+LA\n+Overlap' 'NCCL+MP\n+LA+CSC\n+Overlap'"
set multiplot layout 1, 2 title 'GradientFlow Table 2: ResNet-50 throughput speedup over MPI (paper vs gradsim)'
set xrange [0.4:6.6]
set xtics () font ',9'
set for [i=1:6] xtics add (word(X, i) i)
set ylabel 'speedup over MPI (x)'
set yrange [0:*]
set key top left
set bmargin 4.5
# claims.csv rows: 0 = MPI throughput P, 1-5 = speedups P, 6 = MPI V, 7-11 = speedups V.
do for [c=0:1] {
  set title (c == 0 ? 'Cluster-P (128 P100)' : 'Cluster-V (512 V100)')
  sel(r) = (r > 6 * c && r <= 6 * c + 5) ? int(r) - 6 * c + 1 : NaN
  plot claims using (sel($0) == sel($0) ? bar_x(sel($0), 1, 2) : NaN):(column('paper_lo')):(bar_w(2)) with boxes lc rgb '#9e9e9e' title 'paper', \
       claims using (sel($0) == sel($0) ? bar_x(sel($0), 2, 2) : NaN):(column('gradsim')):(bar_w(2)) with boxes lc rgb '#1f77b4' title 'gradsim', \
       '+' using (bar_x(1, 1, 2)):(1):(bar_w(2)) every ::0::0 with boxes lc rgb '#9e9e9e' notitle, \
       '+' using (bar_x(1, 2, 2)):(1):(bar_w(2)) every ::0::0 with boxes lc rgb '#1f77b4' notitle, \
       claims using (sel($0) == sel($0) ? bar_x(sel($0), 2, 2) : NaN):(column('gradsim')):(sprintf('%.1f', column('gradsim'))) with labels offset 0,0.6 font ',9' notitle
}
unset multiplot
