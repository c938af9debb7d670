# plots/grace-resnet50.gp: GRACE's question as bars: ResNet-50's images a
# second over 8 V100 workers per codec at 1, 10 and 25 Gb/s, gradsim's
# bars beside GRACE's measured throughput (black marks, claims.csv).
name = 'grace-resnet50'
W = 1000; H = 520
load lib
K = 'none topk powersgd terngrad qsgd64 qsgd256 onebit 8bit'
B = '1G 10G 25G'
L = '"1 Gb/s" "10 Gb/s" "25 Gb/s"'
C = '#d62728 #1f77b4 #2ca02c'
codec(v) = idx(word(v, 1), K)
rate(v) = idx(word(v, 2), B)
set title "GRACE: ResNet-50 over 8 V100 workers, gradsim (bars) and GRACE's measurements (marks)"
set ylabel 'throughput (images/s)'
set yrange [0:*]
set xrange [0.4:8.6]
set xtics ('none' 1, 'top-k 1%%' 2, 'PowerSGD' 3, 'TernGrad' 4, 'QSGD 64' 5, 'QSGD 256' 6, '1-bit' 7, '8-bit' 8)
set key top right horizontal
plot for [k=1:3] runs using (rate(strcol('variant')) == k ? bar_x(codec(strcol('variant')), k, 3) : NaN):(column('images_per_s')):(bar_w(3)) with boxes lc rgb word(C, k) title word(L, k), \
     claims using (strcol('group') ne '' && codec(strcol('group')) > 0 ? bar_x(codec(strcol('group')), rate(strcol('group')), 3) : NaN):(column('paper')) with points pt 7 ps 0.9 lc rgb 'black' title 'GRACE', \
     claims using (strcol('claim') eq 'none-1g' ? bar_x(1, 1, 3) : NaN):(column('paper')) with points pt 7 ps 0.9 lc rgb 'black' notitle
