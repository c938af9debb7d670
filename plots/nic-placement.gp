# plots/nic-placement.gp: exchange time of a 4-worker INCEPTIONN ring
# against link bandwidth with the codec on the CPU, the GPU or the NIC,
# and without compression (experiments/nic-placement.ini), at MTU 1500
# and 9000. Run from the repository root:
#   gnuplot -e "dir='results/nic-placement'" plots/nic-placement.gp
# writes DIR/nic-placement.png and DIR/nic-placement.svg.
if (!exists("dir")) dir = 'results/nic-placement'
sel(m, pl, c) = sprintf('< awk -f plots/nic_table.awk %s/config.txt %s/runs.csv | awk ''$3 == %d && $5 == "%s" && $6 %s "none"''', dir, dir, m, pl, c)
set logscale x
set xtics ('10' 1e10, '40' 4e10, '100' 1e11)
set xrange [8e9:1.25e11]
set yrange [0:0.6]
set grid
set style data linespoints
set key top right noenhanced opaque box
set xlabel 'link bandwidth (Gbps)'
set ylabel 'exchange time per iteration (s)'
do for [fmt in 'png svg'] {
  if (fmt eq 'png') { set terminal pngcairo size 1100,480 } else { set terminal svg size 1100,480 }
  set output dir.'/nic-placement.'.fmt
  set multiplot layout 1,2 title "AlexNet, 4-worker ring, INCEPTIONN eb = 2^-10: where the codec runs" noenhanced
  do for [m in '1500 9000'] {
    set title 'MTU '.m.' (packets, headers, 0.5 us driver per packet)' noenhanced
    plot sel(int(m), 'cpu', '==') using 4:14 title 'no compression' lc rgb 'black' pt 7, \
      sel(int(m), 'cpu', '!=') using 4:14 title 'codec on the CPU' lc 1 pt 5, \
      sel(int(m), 'gpu', '!=') using 4:14 title 'codec on the GPU' lc 2 pt 9, \
      sel(int(m), 'nic', '!=') using 4:14 title 'codec on the NIC (100 MHz engine)' lc 3 pt 11
  }
  unset multiplot
}
