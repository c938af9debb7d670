# plots/inceptionn-table3.gp: INCEPTIONN Table III as stacked bars: the
# share of values in each bit-width class, per model and error bound.
name = 'inceptionn-table3'
W = 1000; H = 520
load lib
M = 'alexnet hdc resnet50 vgg16'
B = '2^-10 2^-8 2^-6'
set title 'INCEPTIONN Table III: bit-width distribution of compressed gradients (gradsim)'
set ylabel 'share of gradient values (bars: error bound 2^{-10}, 2^{-8}, 2^{-6})'
set yrange [0:1.15]
set ytics 0, 0.2, 1
set xrange [0.5:4.5]
set xtics ('AlexNet' 1, 'HDC' 2, 'ResNet-50' 3, 'VGG-16' 4)
set key top center horizontal samplen 1.5
x(m, b) = bar_x(idx(m, M), idx(b, B), 3)
# Stacked: each class drawn from 0 to its cumulative share, widest first.
plot runs using (x(strcol('model'), strcol('label'))):(column('share_2bit') + column('share_10bit') + column('share_18bit') + column('share_34bit')):(bar_w(3)) with boxes lc rgb '#08306b' title '34 bits', \
     runs using (x(strcol('model'), strcol('label'))):(column('share_2bit') + column('share_10bit') + column('share_18bit')):(bar_w(3)) with boxes lc rgb '#2171b5' title '18 bits', \
     runs using (x(strcol('model'), strcol('label'))):(column('share_2bit') + column('share_10bit')):(bar_w(3)) with boxes lc rgb '#6baed6' title '10 bits', \
     runs using (x(strcol('model'), strcol('label'))):(column('share_2bit')):(bar_w(3)) with boxes lc rgb '#deebf7' title '2 bits', \
     runs using (x(strcol('model'), strcol('label'))):(1.0):(strcol('label')) with labels offset 0,0.6 font ',9' noenhanced notitle
