# plots/llama-sharded.gp: the README's sharding question
# (experiments/llama-sharded.ini): Llama-2-7B with Adam on 16 DGX H100s
# (128 GPUs), for each strategy (DDP, ZeRO-2, FSDP, HSDP) its time per
# iteration split into GPU compute and exposed communication (fp32 and
# bf16 on the wire), and beside it its memory per GPU against the H100's
# 80 GB. Run from the repository root after the experiment:
#   gnuplot -e "dir='results/llama-sharded'" plots/llama-sharded.gp
# writes DIR/llama-sharded.png and DIR/llama-sharded.svg.
if (!exists("dir")) dir = 'results/llama-sharded'
# One row a strategy of GRAD_DTYPE and CODEC: "label compute comm idle
# memory_GB".
rows(dtype, codec) = sprintf("< awk -F, -v d='%s' -v k='%s' 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $h[\"grad_dtype\"] == d && $h[\"codec\"] == k { n = $h[\"sharding\"]; n = n == \"none\" ? \"DDP\" : n == \"zero2\" ? \"ZeRO-2\" : n == \"zero3\" ? \"FSDP\" : \"HSDP\"; print n, $h[\"split_compute_s\"], $h[\"exposed_comm_s\"] + $h[\"exposed_reduce_s\"] + $h[\"exposed_codec_s\"], $h[\"split_idle_s\"], $h[\"memory_bytes\"] / 1e9 }' %s/runs.csv", dtype, codec, dir)
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set grid ytics lc rgb '#dddddd'
set border 3
set tics nomirror
set key outside bottom center vertical noenhanced
set yrange [0:*]
do for [fmt in 'png svg'] {
  if (fmt eq 'png') { set terminal pngcairo size 1400,480 font 'Helvetica,11' } else { set terminal svg size 1400,480 font 'Helvetica,13' background rgb 'white' }
  set output dir.'/llama-sharded.'.fmt
  set multiplot layout 1,4 title "Llama-2-7B with Adam on 16 DGX H100s (128 GPUs, 100 Gb/s a GPU), overlapped, MPICH's ring" noenhanced
  do for [k = 1:3] {
    d = word('fp32 bf16 fp32', k)
    c = word('none none q8', k)
    set title 'time per iteration, '.(c eq 'q8' ? 'q8 at every hop' : d.' on the wire') noenhanced
    set ylabel 'seconds'
    set yrange [0:7]
    plot rows(d, c) using 2:xtic(1) title 'GPU compute' lc rgb '#2ca02c', \
         '' using 3 title 'exposed comm. + codec' lc rgb '#1f77b4', \
         '' using 4 title 'waiting' lc rgb '#bbbbbb'
  }
  set yrange [0:*]
  set title 'memory per GPU (fp32 or bf16)' noenhanced
  set ylabel 'GB'
  unset key
  set arrow 1 from graph 0, first 80 to graph 1, first 80 nohead lc rgb 'red' dt 2
  set label 1 "H100's 80 GB" at graph 0.45, first 85 tc rgb 'red'
  plot rows('fp32', 'none') using 5:xtic(1) notitle lc rgb '#9467bd'
  unset arrow 1
  unset label 1
  set key
  unset multiplot
}
