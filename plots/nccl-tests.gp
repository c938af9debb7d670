# plots/nccl-tests.gp: allreduce bus bandwidth against buffer size on one
# machine of 8 A100 (gradsim's points and Azure's nccl-tests results),
# and the other machines' single points beside the published figures.
name = 'nccl-tests'
W = 1000; H = 520
load lib
set multiplot layout 1, 2 title "nccl-tests: allreduce bus bandwidth, gradsim against published results"
set title '8 A100 SXM4 on NVSwitch (one machine)'
set xlabel 'buffer size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set logscale x 2
set format x '2^{%L}'
set xtics 8
set yrange [0:260]
set key bottom right
plot runs using (strcol('variant') eq 'A100' ? column('bytes') : NaN):(column('busbw')) with linespoints lw 2 pt 7 lc rgb '#1f77b4' title 'gradsim (NCCL tuner)', \
     claims using ((strcol('claim') eq 'a100' || strcol('claim') eq 'a100-1k' || strcol('claim') eq 'a100-64k') ? (strcol('claim') eq 'a100' ? 1024 * column('group') : (strcol('claim') eq 'a100-1k' ? 1024 : 65536)) : NaN):(column('paper_lo') + column('paper_hi')) / 2 with points pt 6 ps 1.4 lc rgb '#d62728' title 'Azure ND A100 v4 (nccl-tests)'
unset logscale x
set format x '%g'
set title 'other machines, largest buffer'
set xlabel ''
set xtics rotate by -30 ('p4d x1' 1, 'p4d x2' 2, 'p4d x3' 3, 'p4d x4' 4, 'A100 4 NIC x2' 5, 'A100 4 NIC x3' 6, 'H100 ring x2' 7, 'H100 ring x1' 8)
set xrange [0.4:8.6]
set yrange [0:*]
set key top left
G = '"p4d 1" "p4d 2" "p4d 3" "p4d 4" a100-4nic-2 a100-4nic-3 h100-2-ring h100-ring'
k(c, grp) = c eq 'p4d' ? idx(grp, G) : idx(c, G)
plot claims using (k(strcol('claim'), strcol('group')) > 0 ? bar_x(k(strcol('claim'), strcol('group')), 1, 2) : NaN):((column('paper_lo') + column('paper_hi')) / 2):(bar_w(2)) with boxes lc rgb '#9e9e9e' title 'published', \
     claims using (k(strcol('claim'), strcol('group')) > 0 ? bar_x(k(strcol('claim'), strcol('group')), 2, 2) : NaN):(column('gradsim')):(bar_w(2)) with boxes lc rgb '#1f77b4' title 'gradsim'
unset multiplot
