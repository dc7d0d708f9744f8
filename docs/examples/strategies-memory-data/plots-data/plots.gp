reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-latency.png'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, 10 classes, fashion-mnist, CPU (AMD' . "\n" . 'EPYC): strong scaling, global batch 64, 32x32' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'strong-resnet18-fp32-10-classes-fashion-mnist-cpu-amd-epyc-i32-gb64.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
