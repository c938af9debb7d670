# plots/redsync-fig3.gp: RedSync Fig. 3: time of each communication-set
# selection method against the data size, with the allreduce of the same
# data (log-log).
name = 'redsync-fig3'
W = 900; H = 560
load lib
L = 'radixSelect trimmed binsearch sampled'
T = '"radixSelect (exact)" "trimmed top-0.1%" "threshold binary search" "sampled threshold binary search"'
C = '#d62728 #1f77b4 #2ca02c #ff7f0e'
set title 'RedSync Fig. 3: top-0.1% selection time on this CPU against the allreduce (16 nodes, 28 Gbps)'
set xlabel 'data size (float32 values)'
set ylabel 'time per operation (s)'
set logscale x 2
set logscale y
set format x '2^{%L}'
set format y '10^{%L}'
set xtics 4
set mxtics 1
set offsets graph 0.04, graph 0.04, 0, 0
set key top left
plot for [k=1:4] runs using (strcol('label') eq word(L, k) ? column('values') : NaN):(column('select_s')) \
       with linespoints lw 2 pt 7 lc rgb word(C, k) title word(T, k), \
     runs using (strcol('label') eq 'radixSelect' ? column('values') : NaN):(column('allreduce_s')) \
       with linespoints lw 2 dt 2 pt 4 lc rgb 'black' title 'allreduce (RedSync Eq. 2)'
