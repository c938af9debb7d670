# plots/pipesgd-fig4.gp: Pipe-SGD Fig. 4 (right column): per benchmark,
# stacked bars of computation, truncation/quantization and the exposed
# allreduce/communication time per iteration, for each design.
name = 'pipesgd-fig4'
W = 1200; H = 800
load lib
M = 'mnist-mlp alexnet resnet18 cifar100-convex'
MT = '"MNIST-MLP" "AlexNet" "ResNet-18" "CIFAR100-Convex"'
V = 'PS-Sync D-Sync D-Sync+T D-Sync+Q Pipe-SGD Pipe-SGD+T Pipe-SGD+Q'
set multiplot layout 2, 2 title 'Pipe-SGD Fig. 4: timing breakdown per iteration (gradsim; 4 workers, 10 GbE)'
set xrange [0.4:7.6]
set xtics ('PS-Sync' 1, 'D-Sync' 2, "D-Sync\n+T" 3, "D-Sync\n+Q" 4, 'Pipe-SGD' 5, "Pipe-SGD\n+T" 6, "Pipe-SGD\n+Q" 7) font ',9'
set ylabel 'time per iteration (ms)'
set yrange [0:*]
set key top right font ',9' samplen 1.5
set bmargin 3.5
do for [m=1:4] {
  set title word(MT, m)
  x(v, mm) = strcol('model') eq word(M, m) ? idx(v, V) : NaN
  plot runs using (x(strcol('variant'), m)):(1e3 * column('iteration_s')):(0.7) with boxes lc rgb '#d62728' title 'Allreduce/Communication', \
       runs using (x(strcol('variant'), m)):(1e3 * (column('compute_s') + column('codec_s'))):(0.7) with boxes lc rgb '#ff7f0e' title 'Truncation/Quantization', \
       runs using (x(strcol('variant'), m)):(1e3 * column('compute_s')):(0.7) with boxes lc rgb '#1f77b4' title 'Computation'
}
unset multiplot
