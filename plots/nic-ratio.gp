# plots/nic-ratio.gp: compression ratio against the reduction of
# communication time, INCEPTIONN's codec on the NIC (experiments/
# nic-ratio.ini). Run from the repository root:
#   gnuplot -e "dir='results/nic-ratio'" plots/nic-ratio.gp
# writes DIR/nic-ratio.png and DIR/nic-ratio.svg.
if (!exists("dir")) dir = 'results/nic-ratio'
table = '< awk -f plots/nic_table.awk '.dir.'/config.txt '.dir.'/runs.csv'
# One series: rows of CLOCK and FRAMING with a codec (ratio > 1).
sel(c, f) = sprintf('< awk -f plots/nic_table.awk %s/config.txt %s/runs.csv | awk ''$1 == %s && $2 == "%s" && $7 > 1''', dir, dir, c, f)
set key bottom right noenhanced opaque box
set title "INCEPTIONN on the NIC, 4-worker ring, 10 Gbps: compression ratio vs communication time" noenhanced
set xlabel 'compression ratio (uncompressed payload bytes / compressed)'
set ylabel 'communication time saved vs uncompressed (%)'
set xrange [1:18]
set yrange [0:100]
set grid
set style data linespoints
# The paper: 5.5-11.6x, about 54% less communication time (Section VIII-C).
set object 1 rect from 5.5,50 to 11.6,58 fc rgb '#dddddd' fs solid 0.5 noborder behind
set label 1 'paper: 5.5-11.6x, about 54%' at 5.6,47 font ',9' noenhanced
do for [fmt in 'png svg'] {
  if (fmt eq 'png') { set terminal pngcairo size 900,560 } else { set terminal svg size 900,560 }
  set output dir.'/nic-ratio.'.fmt
  plot 100 * (1 - 1 / x) title 'ideal: 1 - 1/ratio' with lines dashtype 2 lc rgb 'gray40', \
    sel('1e+08', 'none') using 7:(100 * $9) title 'engine 100 MHz, no packets' lc 1 pt 7, \
    sel('1e+08', 'packets') using 7:(100 * $9) title 'engine 100 MHz, packets + headers + driver' lc 2 pt 4 ps 2, \
    sel('4e+08', 'none') using 7:(100 * $9) title 'engine 400 MHz, no packets' lc 3 pt 9, \
    sel('4e+08', 'packets') using 7:(100 * $9) title 'engine 400 MHz, packets + headers + driver' lc 4 pt 11
}
