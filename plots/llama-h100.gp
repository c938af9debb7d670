# plots/llama-h100.gp: the README's worked example (experiments/llama-h100.ini):
# Llama-2-7B on 16 DGX H100s (128 GPUs), time per iteration against the bandwidth of
# each GPU's NIC, for the gradients uncompressed (fp32 or bf16 on the wire:
# bf16 as DDP's bf16 hook sends them) and as PowerSGD's rank-4 factors
# (fp32 and bf16), compressed once a bucket as DDP's hooks do; the compute
# alone as a floor. Run from the repository root after the experiment:
#   gnuplot -e "dir='results/llama-h100'" plots/llama-h100.gp
# writes DIR/llama-h100.png and DIR/llama-h100.svg.
if (!exists("dir")) dir = 'results/llama-h100'
# The rows of one series, CODEC and GRAD_DTYPE, as "Gb/s seconds" pairs
# (column COL of runs.csv), by bandwidth: awk finds the columns by name.
series(codec, dtype, col) = sprintf("< awk -F, -v c='%s' -v d='%s' -v y='%s' 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $h[\"codec\"] == c && $h[\"grad_dtype\"] == d { print $h[\"bandwidth_bps\"] / 1e9, $h[y] }' %s/runs.csv | sort -g", codec, dtype, col, dir)
set logscale x
set xtics ('25' 25, '100' 100, '400' 400)
set xrange [20:500]
set yrange [0:*]
set grid ytics lc rgb '#dddddd'
set border 3
set tics nomirror
set key inside bottom right opaque box noenhanced
set xlabel 'NIC bandwidth per GPU (Gb/s)'
set ylabel 'time per iteration (s)'
set style data linespoints
do for [fmt in 'png svg'] {
  if (fmt eq 'png') { set terminal pngcairo size 900,520 font 'Helvetica,11' } else { set terminal svg size 900,520 font 'Helvetica,13' background rgb 'white' }
  set output dir.'/llama-h100.'.fmt
  set title "Llama-2-7B on 16 DGX H100s (128 GPUs): would bf16 gradients or PowerSGD help?\n(NCCL's tuner; DDP's 25 MiB buckets, overlapped with backward, compressed once each)" noenhanced
  plot series('none', 'fp32', 'iteration_s') using 1:2 title 'uncompressed, fp32 gradients' lc rgb 'black' pt 7 lw 2, \
       series('none', 'bf16', 'iteration_s') using 1:2 title 'uncompressed, bf16 gradients' lc rgb '#777777' pt 7 dt 2 lw 2, \
       series('powersgd:rank=4', 'fp32', 'iteration_s') using 1:2 title 'PowerSGD, rank 4 (fp32 factors)' lc 2 pt 9 lw 2, \
       series('powersgd:rank=4', 'bf16', 'iteration_s') using 1:2 title 'PowerSGD, rank 4 (bf16 factors)' lc 1 pt 5 dt 2 lw 2, \
       series('none', 'fp32', 'compute_s') using 1:2 title 'compute alone' lc rgb '#2ca02c' pt 0 dt 3 lw 2
}
