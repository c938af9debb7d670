# plots/formulas.gp: relative error of every analytic model against the
# simulation, 2 to 1024 workers, ideal network (log-log; errors below
# 1e-15 are rounding and drawn at 1e-16).
name = 'formulas'
W = 1000; H = 580
load lib
V = '"ring" "inceptionn" "rdb" "rabenseifner" "allgather-rdb" "ps" "ps direct pull" "hierarchical" "sync" "pipe"'
T = '"ring" "INCEPTIONN ring" "recursive doubling" "Rabenseifner (RedSync Eq. 2)" "allgather (RedSync Eq. 1)" "worker-aggregator (WA)" "parameter server, direct pull" "hierarchical ring" "Pipe-SGD Eq. 2 (sync)" "Pipe-SGD Eq. 4 (pipe, K=2)"'
C = '#1f77b4 #aec7e8 #2ca02c #98df8a #ff7f0e #d62728 #ff9896 #9467bd #8c564b #e377c2'
P = '7 6 5 4 9 11 10 13 15 2'
set title 'Analytic models against the simulation (gradsim, ideal network)'
set xlabel 'workers'
set ylabel '|simulated - model| / model'
set logscale x 2
set logscale y
set format y '10^{%L}'
set xrange [1.5:1400]
set yrange [5e-17:10]
set xtics (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
set key inside right center font ',10' samplen 2 box opaque
fl(x) = x < 1e-16 ? 1e-16 : x
err(v) = v eq 'sync' ? column('sync_rel_err') : (v eq 'pipe' ? column('pipe_rel_err') : column('formula_rel_err'))
plot for [k=1:10] runs using (strcol('variant') eq word(V, k) ? column('nodes') : NaN):(fl(err(strcol('variant')))) \
       with linespoints lw 2 pt int(word(P, k)) lc rgb word(C, k) title word(T, k)
