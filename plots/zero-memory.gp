# plots/zero-memory.gp: ZeRO Figure 1 as bars: one GPU's model states
# (weights, gradients, optimizer states) replicated and under ZeRO's three
# stages, gradsim's beside the paper's totals.
name = 'zero-memory'
W = 900; H = 520
load lib
S = 'baseline P_os P_os+g P_os+g+p'
set title 'ZeRO Figure 1: model states per GPU, 7.5B parameters, 64 GPUs, Adam in mixed precision (gradsim)'
set ylabel 'GB per GPU'
set yrange [0:140]
set xrange [0.5:4.5]
set xtics ('Baseline' 1, 'P_{os}' 2, 'P_{os+g}' 3, 'P_{os+g+p}' 4)
set key top right
x(s) = idx(s, S)
# The paper's totals (CSV with a header: common.gp reads column headers).
$paper << EOD
x,gb
1,120
2,31.4
3,16.6
4,1.9
EOD
plot runs using (x(strcol('variant'))):((column('memory_params_bytes') + column('memory_grads_bytes') + column('memory_optimizer_bytes')) / 1e9):(0.6) with boxes lc rgb '#9ecae1' title 'optimizer states', \
     runs using (x(strcol('variant'))):((column('memory_params_bytes') + column('memory_grads_bytes')) / 1e9):(0.6) with boxes lc rgb '#4292c6' title 'gradients', \
     runs using (x(strcol('variant'))):(column('memory_params_bytes') / 1e9):(0.6) with boxes lc rgb '#08519c' title 'weights', \
     $paper using 1:2 with points pt 7 ps 1.5 lc rgb 'red' title 'the paper (120, 31.4, 16.6, 1.9 GB)'
