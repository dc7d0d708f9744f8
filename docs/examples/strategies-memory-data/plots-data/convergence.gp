reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'ttl-resnet18-fashion-mnist-cpu-loss.png'
set title 'resnet18 on fashion-mnist, cpu: training loss against' . "\n" . 'wall time' noenhanced
set xlabel 'wall time (s)'
set ylabel 'training loss (cross-entropy, mean over ranks)'
plot 'ttl-resnet18-fashion-mnist-cpu-loss.dat' index 0 using 1:2 with lines lw 2 title '1 rank', '' index 1 using 1:2 with lines lw 2 title '2 ranks'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'ttl-resnet18-fashion-mnist-cpu-loss.svg'
set title 'resnet18 on fashion-mnist, cpu: training loss against' . "\n" . 'wall time' noenhanced
set xlabel 'wall time (s)'
set ylabel 'training loss (cross-entropy, mean over ranks)'
plot 'ttl-resnet18-fashion-mnist-cpu-loss.dat' index 0 using 1:2 with lines lw 2 title '1 rank', '' index 1 using 1:2 with lines lw 2 title '2 ranks'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'ttl-resnet18-fashion-mnist-cpu-accuracy.png'
set title 'resnet18 on fashion-mnist, cpu: test accuracy per' . "\n" . 'epoch' noenhanced
set xlabel 'wall time (s)'
set ylabel 'test accuracy'
plot 'ttl-resnet18-fashion-mnist-cpu-accuracy.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title '1 rank', '' index 1 using 1:2 with linespoints lw 2 pt 7 title '2 ranks'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'ttl-resnet18-fashion-mnist-cpu-accuracy.svg'
set title 'resnet18 on fashion-mnist, cpu: test accuracy per' . "\n" . 'epoch' noenhanced
set xlabel 'wall time (s)'
set ylabel 'test accuracy'
plot 'ttl-resnet18-fashion-mnist-cpu-accuracy.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title '1 rank', '' index 1 using 1:2 with linespoints lw 2 pt 7 title '2 ranks'
unset output
