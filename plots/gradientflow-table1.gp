# plots/gradientflow-table1.gp: GradientFlow Table 1 as bars: throughput
# (images/s, log scale) as the optimizations are added, paper beside
# gradsim, on Cluster-P (left) and Cluster-V (right).
name = 'gradientflow-table1'
W = 1200; H = 520
load lib
X = "'MPI' 'NCCL' 'NCCL\n+MP' 'NCCL+MP\n+Overlap' 'NCCL+MP\n+LA\n+Overlap' 'NCCL+MP\n+LA+CSC\n+Overlap'"
set multiplot layout 1, 2 title 'GradientFlow Table 1: AlexNet throughput (paper vs gradsim)'
set xrange [0.4:6.6]
set xtics () font ',9'
set for [i=1:6] xtics add (word(X, i) i)
set ylabel 'images/s'
set logscale y
set yrange [*:*]
set key top left
set bmargin 4.5
# claims.csv rows: 0-5 = MPI, NCCL and the four designs on P; 6-11 = MPI and five designs on V
# (Cluster-P's NCCL row is the calibration number).
do for [c=0:1] {
  set title (c == 0 ? 'Cluster-P (128 P100)' : 'Cluster-V (512 V100)')
  sel(r) = (r >= 6 * c && r <= 6 * c + 5) ? int(r) - 6 * c + 1 : NaN
  plot claims using (sel($0) == sel($0) ? bar_x(sel($0), 1, 2) : NaN):(column('paper_lo')):(bar_w(2)) with boxes lc rgb '#9e9e9e' title 'paper', \
       claims using (sel($0) == sel($0) ? bar_x(sel($0), 2, 2) : NaN):(column('gradsim')):(bar_w(2)) with boxes lc rgb '#1f77b4' title 'gradsim', \
       claims using (sel($0) == sel($0) ? bar_x(sel($0), 2, 2) : NaN):(column('gradsim')):(sprintf('%.0fK', column('gradsim') / 1000)) with labels offset 0,0.6 font ',9' notitle
}
unset multiplot
