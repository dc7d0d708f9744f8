reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:5 with linespoints lw 2 pt 7 title 'per rank'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:5 with linespoints lw 2 pt 7 title 'per rank'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-latency.png'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:5 with linespoints lw 2 pt 7 title 'per rank'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:5 with linespoints lw 2 pt 7 title 'per rank'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-latency.png'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
