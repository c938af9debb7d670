# plots/zeropp.gp: ZeRO-3's and ZeRO++'s TFLOPs per GPU for the 18B GPT
# on 384 V100 (the ZeRO++ evaluation): a bar per variant, gradsim's
# TFLOPs (the spec's derive), beside the blog's values (100 Gb/s: ZeRO-3
# 14 and 26, ZeRO++ 31 and 46; ZeRO-3 at 4 x 100 Gb/s 40 and at 800 Gb/s
# 47, not evaluable: one NIC carries gradsim's ring).
name = 'zeropp'
W = 1000; H = 520
load lib
set title 'ZeRO-3 and ZeRO++, 18B GPT on 384 V100: TFLOPs per GPU (gradsim bars, the blog red)'
set ylabel 'TFLOPs per GPU'
set yrange [0:60]
set xrange [0.5:6.5]
set xtics ('ZeRO-3 1K, 100G' 1, 'ZeRO-3 2K, 100G' 2, 'ZeRO++ 1K, 100G' 3, 'ZeRO++ 2K, 100G' 4, 'ZeRO-3 2K, 4x100G' 5, 'ZeRO-3 2K, 8x100G' 6)
set key top left
# Megatron-DeepSpeed's FLOPs an iteration for B sequences (the spec's derive).
f(b) = 96.0 * b * 512 * 40 * 6144 * 6144 * (1 + 512.0 / (6 * 6144) + 50257.0 / (16 * 40 * 6144)) / 1e12
x(s) = s eq 'zero3 1K' ? 1 : s eq 'zero3 2K' ? 2 : s eq 'zeropp 1K' ? 3 : s eq 'zeropp 2K' ? 4 : s eq 'zero3 2K 4x100G' ? 5 : 6
b(s) = s eq 'zero3 1K' || s eq 'zeropp 1K' ? 2 : 4
$paper << EOD
x,tflops
1,14
2,26
3,31
4,46
5,40
6,47
EOD
plot runs using (x(strcol('variant'))):(f(b(strcol('variant'))) / column('iteration_s')):(0.6) with boxes lc rgb '#4292c6' title 'gradsim', \
     $paper using 1:2 with points pt 7 ps 1.5 lc rgb 'red' title 'ZeRO++ blog'
