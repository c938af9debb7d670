# plots/inceptionn-fig15.gp: INCEPTIONN Fig. 15: gradient exchange time of
# WA and INC against the number of workers, normalised to 4-worker WA, one
# panel per model, the Section VIII-D formulas dashed.
name = 'inceptionn-fig15'
W = 1200; H = 420
load lib
M = 'alexnet hdc resnet50 vgg16'
MT = '"AlexNet" "HDC" "ResNet-50" "VGG-16"'
set multiplot layout 1, 4 title 'INCEPTIONN Fig. 15: gradient exchange time normalised to 4-worker WA (gradsim; dashed: the formulas)'
set xrange [3.5:8.5]
set xtics 4, 1, 8
set xlabel 'workers'
set yrange [0:*]
set key top left font ',9' samplen 1.5
do for [m=1:4] {
  set title word(MT, m)
  set ylabel (m == 1 ? 'normalised exchange time' : '')
  plot runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'WA' ? column('nodes') : NaN):(column('normalised')) with linespoints lw 2 pt 7 lc rgb '#d62728' title 'WA', \
       runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'INC' ? column('nodes') : NaN):(column('normalised')) with linespoints lw 2 pt 5 lc rgb '#1f77b4' title 'INC', \
       runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'WA' ? column('nodes') : NaN):(column('formula_normalised')) with lines dt 2 lc rgb '#d62728' title 'WA formula', \
       runs using (strcol('model') eq word(M, m) && strcol('variant') eq 'INC' ? column('nodes') : NaN):(column('formula_normalised')) with lines dt 2 lc rgb '#1f77b4' title 'INC formula'
}
unset multiplot
