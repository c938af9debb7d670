# plots/common.gp: what every paper-layout script shares. `gradsim
# reproduce` runs each script twice,
#   gnuplot -e "dir='RESULTS/NAME'; term='png'|'svg'; lib='plots/common.gp'" plots/NAME.gp
# and the script sets `name` (the output file's stem), `W` and `H` (pixels)
# and then loads this file: the terminal, the output file, CSV input
# (dir/runs.csv, dir/claims.csv; quoted fields may hold commas) and helpers.
if (!exists("term")) term = 'png'
if (!exists("W")) W = 960
if (!exists("H")) H = 560
if (term eq 'svg') {
  set terminal svg size W, H dynamic enhanced font 'Helvetica,13' background rgb 'white'
} else {
  set terminal pngcairo size W, H enhanced font 'Helvetica,11'
}
set output dir.'/'.name.'.'.term
set datafile separator comma
set datafile columnheaders
set datafile missing NaN
runs = dir.'/runs.csv'
claims = dir.'/claims.csv'
# The position (from 1) of string s in a word list (quote words with
# spaces: '"no ZRE" s=1.00'), 0 if absent.
_idx(s, l, i) = i > words(l) ? 0 : (word(l, i) eq s ? i : _idx(s, l, i + 1))
idx(s, l) = _idx(s, l, 1)
# x of bar k (from 1) of n in cluster c (from 1), clusters 1 apart.
bar_x(c, k, n) = c + (k - (n + 1) / 2.0) * 0.8 / n
bar_w(n) = 0.8 / n
set grid ytics lc rgb '#dddddd'
set border 3
set tics nomirror
set style fill solid 0.85 border rgb '#333333'
