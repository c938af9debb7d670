# plots/inceptionn-fig14.gp: INCEPTIONN Fig. 14(a): average compression
# ratio per model (clusters), one bar per scheme, as in the paper.
name = 'inceptionn-fig14'
W = 1000; H = 520
load lib
M = 'alexnet hdc resnet50 vgg16'
L = 'Base 16b-T 22b-T 24b-T INC(2^-10) INC(2^-8) INC(2^-6)'
T = 'Base 16b-T 22b-T 24b-T "INC(2^{-10})" "INC(2^{-8})" "INC(2^{-6})"'
C = '#ffffff #d9d9d9 #a6a6a6 #6e6e6e #9ecae1 #4292c6 #08519c'
set title 'INCEPTIONN Fig. 14(a): average compression ratio (gradsim, synthetic gradients)'
set ylabel 'Average compression ratio'
set yrange [0:17]
set ytics 0, 3
set xrange [0.5:4.5]
set xtics ('AlexNet' 1, 'HDC' 2, 'ResNet-50' 3, 'VGG-16' 4)
set key top center horizontal maxcols 7 samplen 1.5
plot for [k=1:7] runs using (strcol('label') eq word(L, k) ? bar_x(idx(strcol('model'), M), k, 7) : NaN):(column('ratio')):(bar_w(7)) \
       with boxes lc rgb word(C, k) title word(T, k)
