# plots/zhang-bottleneck.gp: Zhang et al. 2020's question as bars: the
# scaling factor of 64 V100s for each model at 100 Gb/s and at 10 Gb/s
# without compression, with fp16 (2x) and with q8 (3.9x).
name = 'zhang-bottleneck'
W = 900; H = 500
load lib
M = 'ResNet-50 ResNet-101 VGG-16'
S = '"100G" "10G" "10G fp16" "10G q8"'
L = '"100 Gb/s" "10 Gb/s" "10 Gb/s, fp16 (2x)" "10 Gb/s, q8 (3.9x)"'
C = '#1f77b4 #d62728 #ff7f0e #2ca02c'
# The model (1..3) and setting (1..4) of a variant "MODEL SETTING".
model(v) = idx(word(v, 1), M)
setting(v) = idx(v[strlen(word(v, 1)) + 2:], S)
set title "Zhang et al. 2020: scaling factor of 64 V100s (8 p3dn machines), gradsim"
set ylabel 'scaling factor (1: linear)'
set yrange [0:1.15]
set xrange [0.4:3.6]
set xtics ('ResNet-50' 1, 'ResNet-101' 2, 'VGG-16' 3)
set key top center horizontal
set arrow from 0.4, 0.9 to 3.6, 0.9 nohead dt 2 lc rgb '#555555'
set label 'almost linear (0.9)' at 3.55, 0.93 right
plot for [k=1:4] runs using (setting(strcol('variant')) == k ? bar_x(model(strcol('variant')), k, 4) : NaN):(column('scaling')):(bar_w(4)) with boxes lc rgb word(C, k) title word(L, k)
