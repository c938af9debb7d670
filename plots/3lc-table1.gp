# plots/3lc-table1.gp: 3LC Table 1 as bars: speedup over 32-bit float of
# each design at 10 Mbps, 100 Mbps and 1 Gbps (gradsim's bars, the
# paper's values as black marks), log scale.
name = '3lc-table1'
W = 1200; H = 600
load lib
# claims.csv: the first 30 rows are the ten designs, three bandwidths each.
D = "'8-bit int' 'Stoch 3-value\n+ QE' 'MQE\n1-bit int' '25%%\nsparsif.' '5%%\nsparsif.' '2 local\nsteps' '3LC\ns=1.00' '3LC\ns=1.50' '3LC\ns=1.75' '3LC\ns=1.90'"
C = '#c6dbef #6baed6 #08519c'
B = '"10 Mbps" "100 Mbps" "1 Gbps"'
set title '3LC Table 1: speedup over 32-bit float (ResNet-110, 10 workers + 1 server)'
set ylabel 'speedup over 32-bit float (x, log scale)'
set logscale y
set yrange [0.8:100]
set xrange [0.5:10.5]
set xtics () nomirror
set for [i=1:10] xtics add (word(D, i) i)
set key top left
set bmargin 4.5
ok(r) = r < 30
plot for [k=1:3] claims using (ok($0) && int($0) % 3 == k - 1 ? bar_x(int($0 / 3) + 1, k, 3) : NaN):(column('gradsim')):(bar_w(3)) \
       with boxes lc rgb word(C, k) title 'gradsim '.word(B, k), \
     for [k=1:3] claims using (ok($0) && int($0) % 3 == k - 1 ? bar_x(int($0 / 3) + 1, k, 3) : NaN):(column('paper_lo')) \
       with points pt 5 ps 0.8 lc rgb 'black' title (k == 1 ? 'paper (Table 1)' : '')
