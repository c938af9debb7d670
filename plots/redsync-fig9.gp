# plots/redsync-fig9.gp: RedSync Fig. 9: per model, throughput against the
# number of GPUs (left part of Fig. 9), RedSync's speedup over SGD (right
# part), and the exchange time per iteration with Equations (1) and (2).
name = 'redsync-fig9'
W = 1500; H = 1050
load lib
M = 'vgg16 alexnet resnet50 lstm-ptb'
MT = '"VGG-16" "AlexNet" "ResNet-50" "LSTM (PTB)"'
V = 'SGD RGC RGC+ASQ'
C = '#333333 #1f77b4 #d62728'
set multiplot layout 3, 4 title 'RedSync Fig. 9 (gradsim): P100 nodes on a dragonfly, 80 Gbps per node'
set logscale x 2
set xrange [1.5:170]
set xtics (2, 4, 8, 16, 32, 64, 128) font ',9'
set key top left reverse Left font ',9' samplen 1.5
# Row 1: throughput (samples/s).
do for [m=1:4] {
  set title word(MT, m)
  set ylabel (m == 1 ? 'samples/s' : '')
  set logscale y
  unset yrange
  plot for [k=1:3] runs using (strcol('model') eq word(M, m) && strcol('variant') eq word(V, k) ? column('nodes') : NaN):(column('throughput')) \
         with linespoints lw 2 pt 7 ps 0.7 lc rgb word(C, k) title word(V, k)
}
# Row 2: speedup over SGD.
do for [m=1:4] {
  set title word(MT, m).': speedup over SGD'
  set ylabel (m == 1 ? 'speedup (x)' : '')
  if (m == 3) { set key bottom left } else { set key top left }
  unset logscale y
  set yrange [0:*]
  plot for [k=2:3] runs using (strcol('model') eq word(M, m) && strcol('variant') eq word(V, k) ? column('nodes') : NaN):(column('speedup')) \
         with linespoints lw 2 pt 7 ps 0.7 lc rgb word(C, k) title word(V, k), \
       1 with lines dt 3 lc rgb 'gray' notitle
}
# Row 3: exchange time per iteration, simulated and Equations (1), (2).
do for [m=1:4] {
  set title word(MT, m).': exchange time'
  set ylabel (m == 1 ? 'seconds per iteration' : '')
  set xlabel 'GPUs'
  set key bottom right
  set logscale y
  set format y '10^{%L}'
  set yrange [1e-4:1]
  plot for [k=1:3] runs using (strcol('model') eq word(M, m) && strcol('variant') eq word(V, k) ? column('nodes') : NaN):(column('exchange_s')) \
         with linespoints lw 2 pt 7 ps 0.7 lc rgb word(C, k) title word(V, k), \
       runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'SGD' ? column('nodes') : NaN):(column('eq2_s')) \
         with lines dt 2 lw 1.5 lc rgb word(C, 1) title 'Eq. (2)', \
       runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'RGC+ASQ' ? column('nodes') : NaN):(column('eq1_s')) \
         with lines dt 2 lw 1.5 lc rgb word(C, 3) title 'Eq. (1)'
}
unset multiplot
