# plots/inceptionn-fig12.gp: INCEPTIONN Fig. 12: training time normalised
# to WA per model, four designs per model, each bar split into computation
# and communication.
name = 'inceptionn-fig12'
W = 1000; H = 540
load lib
M = 'alexnet hdc resnet50 vgg16'
V = 'WA WA+C INC INC+C'
set title 'INCEPTIONN Fig. 12: training time normalised to WA (gradsim; 4 workers, 10 GbE, codec 2^{-10} on the NIC)'
set ylabel 'normalised training time'
set yrange [0:1.25]
set ytics 0, 0.2, 1
set xrange [0.5:4.5]
set xtics ('AlexNet' 1, 'HDC' 2, 'ResNet-50' 3, 'VGG-16' 4)
set key top right horizontal samplen 1.5
x(m, v) = bar_x(idx(m, M), idx(v, V), 4)
plot runs using (x(strcol('model'), strcol('variant'))):(column('normalised')):(bar_w(4)) with boxes lc rgb '#d62728' title 'Communication', \
     runs using (x(strcol('model'), strcol('variant'))):(column('compute_norm')):(bar_w(4)) with boxes lc rgb '#1f77b4' title 'Computation', \
     runs using (x(strcol('model'), strcol('variant'))):(column('normalised')):(strcol('variant')) with labels rotate by 90 left offset 0,0.4 font ',8' notitle
