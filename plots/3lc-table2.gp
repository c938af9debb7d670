# plots/3lc-table2.gp: 3LC Table 2 as bars: compression ratio against the
# sparsity multiplier, the paper's beside gradsim's (log scale).
name = '3lc-table2'
W = 900; H = 520
load lib
S = '"no ZRE" s=1.00 s=1.50 s=1.75 s=1.90'
# claims.csv: claim nozre-ratio (no group), ratio-s (group = label) and
# the calibration claim ratio-s175 (s = 1.75, no group).
g(c, grp) = c eq 'nozre-ratio' ? 1 : (c eq 'ratio-s175' ? 4 : (c eq 'ratio-s' ? idx(grp, S) : 0))
set title "3LC Table 2: compression ratio of 3LC (ResNet-110 gradients)"
set ylabel 'compression ratio (x, log scale)'
set logscale y
set yrange [5:*]
set xrange [0.4:5.6]
set xtics ('no ZRE' 1, 's = 1.00' 2, 's = 1.50' 3, 's = 1.75' 4, 's = 1.90' 5)
set key top left
plot claims using (g(strcol('claim'), strcol('group')) > 0 ? bar_x(g(strcol('claim'), strcol('group')), 1, 2) : NaN):(column('paper_lo')):(bar_w(2)) with boxes lc rgb '#9e9e9e' title 'paper (Table 2)', \
     claims using (g(strcol('claim'), strcol('group')) > 0 ? bar_x(g(strcol('claim'), strcol('group')), 2, 2) : NaN):(column('gradsim')):(bar_w(2)) with boxes lc rgb '#1f77b4' title 'gradsim', \
     claims using (g(strcol('claim'), strcol('group')) > 0 ? bar_x(g(strcol('claim'), strcol('group')), 2, 2) : NaN):(column('gradsim')):(sprintf('%.0f', column('gradsim'))) with labels offset 0,0.7 notitle
