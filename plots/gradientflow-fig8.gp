# plots/gradientflow-fig8.gp: GradientFlow Fig. 8: allreduce throughput
# (tensor bytes / time) against tensor size for OpenMPI's butterfly,
# NCCL's ring and NCCL-H, the hierarchical ring, on Cluster-P.
name = 'gradientflow-fig8'
W = 900; H = 560
load lib
V = 'OpenMPI NCCL NCCL-H'
T = '"OpenMPI (butterfly)" "NCCL (ring)" "NCCL-H (hierarchical ring)"'
C = '#2ca02c #1f77b4 #d62728'
set title 'GradientFlow Fig. 8: FP32 allreduce throughput on Cluster-P (gradsim)'
set xlabel 'tensor size (bytes)'
set ylabel 'throughput (Gbit/s of tensor data)'
set logscale x 2
set format x '2^{%L}'
set xtics 4
set offsets graph 0.04, graph 0.04, 0, 0
set yrange [0:*]
set key top left
plot for [k=1:3] runs using (strcol('variant') eq word(V, k) ? column('bytes') : NaN):(column('gbps')) \
       with linespoints lw 2 pt 7 lc rgb word(C, k) title word(T, k)
