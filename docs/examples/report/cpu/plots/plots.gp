reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.0490 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.9374
set bmargin at screen 0.1215
set terminal pngcairo size 560,1103 font 'DejaVu Sans,11.25'
set output 'single-gpu-count-throughput.png'
set title 'Throughput per rank of the configurations measured at' . "\n" . 'one size' noenhanced
set xlabel 'examples/s per rank (whiskers: p95 to p5 step)'
set yrange [11.50:-0.5]
set xrange [0:62.423]
plot 'single-gpu-count-throughput.dat' using (0):($0-0.3067):1 with labels left offset 0.4,0 noenhanced notitle, '' using (0):($0-0.0533):2 with labels left offset 0.4,0 noenhanced notitle, '' using ($3/2):($0+0.2467):($3/2):(0.1333) with boxxyerror lc rgb '#4477aa' title 'DDP (p50 step)', '' using 3:($0+0.2467):4:5 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 6:($0+0.2467) with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
set terminal svg size 560,1103 font 'DejaVu Sans,15' background '#ffffff'
set output 'single-gpu-count-throughput.svg'
set title 'Throughput per rank of the configurations measured at' . "\n" . 'one size' noenhanced
set xlabel 'examples/s per rank (whiskers: p95 to p5 step)'
set yrange [11.50:-0.5]
set xrange [0:62.423]
plot 'single-gpu-count-throughput.dat' using (0):($0-0.3067):1 with labels left offset 0.4,0 noenhanced notitle, '' using (0):($0-0.0533):2 with labels left offset 0.4,0 noenhanced notitle, '' using ($3/2):($0+0.2467):($3/2):(0.1333) with boxxyerror lc rgb '#4477aa' title 'DDP (p50 step)', '' using 3:($0+0.2467):4:5 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 6:($0+0.2467) with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b8-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 8' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:550.955]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b8-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b8-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 8' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:550.955]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b8-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-latency.png'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 4 ranks: oversubscribed' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:935.824]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:935.824]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-bucket-cap-1-mib-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 1 MiB, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:446.561]
plot 'weak-resnet18-fp32-bucket-cap-1-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-bucket-cap-1-mib-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 1 MiB, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:446.561]
plot 'weak-resnet18-fp32-bucket-cap-1-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-bucket-cap-5-mib-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 5 MiB, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:424.556]
plot 'weak-resnet18-fp32-bucket-cap-5-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-bucket-cap-5-mib-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 5 MiB, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:424.556]
plot 'weak-resnet18-fp32-bucket-cap-5-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-allreduce-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook allreduce, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:461.329]
plot 'weak-resnet18-fp32-comm-hook-allreduce-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-allreduce-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook allreduce, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:461.329]
plot 'weak-resnet18-fp32-comm-hook-allreduce-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-bf16-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook bf16, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:452.212]
plot 'weak-resnet18-fp32-comm-hook-bf16-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-bf16-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook bf16, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:452.212]
plot 'weak-resnet18-fp32-comm-hook-bf16-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-fp16-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook fp16, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:634.997]
plot 'weak-resnet18-fp32-comm-hook-fp16-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-fp16-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook fp16, CPU (AMD EPYC): weak' . "\n" . 'scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:634.997]
plot 'weak-resnet18-fp32-comm-hook-fp16-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-hierarchical-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook hierarchical, CPU (AMD' . "\n" . 'EPYC): weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:572.141]
plot 'weak-resnet18-fp32-comm-hook-hierarchical-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-hierarchical-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook hierarchical, CPU (AMD' . "\n" . 'EPYC): weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:572.141]
plot 'weak-resnet18-fp32-comm-hook-hierarchical-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-powersgd-2-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook powersgd:2, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:549.007]
plot 'weak-resnet18-fp32-comm-hook-powersgd-2-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-powersgd-2-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook powersgd:2, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:549.007]
plot 'weak-resnet18-fp32-comm-hook-powersgd-2-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-comm-hook-topk-0-01-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook topk:0.01, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:733.08]
plot 'weak-resnet18-fp32-comm-hook-topk-0-01-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-comm-hook-topk-0-01-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, comm hook topk:0.01, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:733.08]
plot 'weak-resnet18-fp32-comm-hook-topk-0-01-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-bucket-cap-100-mib-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 100 MiB, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:391.178]
plot 'weak-resnet18-fp32-bucket-cap-100-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-bucket-cap-100-mib-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, bucket cap 100 MiB, CPU (AMD EPYC):' . "\n" . 'weak scaling, batch 16 per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:391.178]
plot 'weak-resnet18-fp32-bucket-cap-100-mib-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b32-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 32' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:779.037]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b32-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet18-fp32-cpu-amd-epyc-i64-b32-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): weak scaling, batch 32' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:779.037]
plot 'weak-resnet18-fp32-cpu-amd-epyc-i64-b32-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b8-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 8' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:3146.61]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b8-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b8-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 8' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:3146.61]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b8-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-latency.png'
set title 'Time per iteration' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhead' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:1028.26]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet50, fp32, CPU (AMD EPYC): weak scaling, batch 16' . "\n" . 'per rank, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:1028.26]
plot 'weak-resnet50-fp32-cpu-amd-epyc-i64-b16-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
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
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-throughput.png'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-throughput.svg'
set title 'Aggregate throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'throughput (examples/s, all ranks)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$2:1/0) with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-rank ex/s x ranks)', '' using 1:($9!=0?$2:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-efficiency.png'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-efficiency.svg'
set title 'Scaling efficiency' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:110]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($10==0?$4:1/0) with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %', '' using 1:($10!=0?$4:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-per-gpu.png'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-per-gpu.svg'
set title 'Per-rank throughput' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'throughput per rank (examples/s)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$5:1/0) with linespoints lw 2 pt 7 title 'per rank', '' using 1:($9!=0?$5:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-latency.png'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-latency.svg'
set title 'Time per iteration' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64; voided: 1 rank:' . "\n" . 'negative_ddp_overhead; 2 ranks: negative_ddp_overhe...' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:5.6]
set yrange [0:*]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32.dat' using 1:($9==0?$7:1/0):6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95', '' using 1:($9!=0?$7:1/0) with points pt 6 ps 2 lw 2 lc rgb '#cc3311' title 'voided by a warning'
unset output
reset
set encoding utf8
set grid
set key height 1
set key outside below center horizontal
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6 relative
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-breakdown.png'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:674.527]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-breakdown.svg'
set title 'Step breakdown' . "\n" . 'resnet18, fp32, CPU (AMD EPYC): strong scaling, global' . "\n" . 'batch 32, 64x64' noenhanced
set ylabel 'milliseconds per step (mean over ranks)'
set xlabel 'ranks'
set yrange [0:674.527]
plot 'strong-resnet18-fp32-cpu-amd-epyc-i64-gb32-breakdown.dat' using 2:xtic(1) title 'forward', '' using 3 title 'backward compute', '' using 4 title 'exposed comm', '' using 5 title 'optimizer', '' using 6 title 'other'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set key outside below left vertical Left reverse samplen 2
set terminal pngcairo size 560,500 font 'DejaVu Sans,11.25'
set output 'overlay-strong-resnet18.png'
set title 'strong resnet18: per-rank throughput of 2 tables' noenhanced
set ylabel 'examples/s per rank (whiskers: p95 to p5 step)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'overlay-strong-resnet18.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'F7: fp32, 10 classes, fashion-mnist, gl...' noenhanced, '' index 1 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'F5: fp32, global batch 32' noenhanced, '' index 2 using 1:2 with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
set terminal svg size 560,500 font 'DejaVu Sans,15' background '#ffffff'
set output 'overlay-strong-resnet18.svg'
set title 'strong resnet18: per-rank throughput of 2 tables' noenhanced
set ylabel 'examples/s per rank (whiskers: p95 to p5 step)'
set xlabel 'ranks (log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'overlay-strong-resnet18.dat' index 0 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'F7: fp32, 10 classes, fashion-mnist, gl...' noenhanced, '' index 1 using 1:2:3:4 with yerrorlines lw 2 pt 7 title 'F5: fp32, global batch 32' noenhanced, '' index 2 using 1:2 with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.0708 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.9096
set bmargin at screen 0.1756
set terminal pngcairo size 560,763 font 'DejaVu Sans,11.25'
set output 'impact-resnet18-fp32-cpu-amd-epyc-i64-b16-2r.png'
set title 'Optimization impact, DDP on 2 ranks' . "\n" . 'resnet18, fp32, batch 16 per rank, CPU (AMD EPYC)' noenhanced
set xlabel 'aggregate examples/s (p50 step time)'
set yrange [9.50:-0.5]
set xrange [0:99.4772]
plot 'impact-resnet18-fp32-cpu-amd-epyc-i64-b16-2r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($3 == 1 ? $2/2 : NaN):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#999999' title 'DDP defaults', '' using ($3 == 0 ? $2/2 : NaN):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'variant'
unset output
set terminal svg size 560,763 font 'DejaVu Sans,15' background '#ffffff'
set output 'impact-resnet18-fp32-cpu-amd-epyc-i64-b16-2r.svg'
set title 'Optimization impact, DDP on 2 ranks' . "\n" . 'resnet18, fp32, batch 16 per rank, CPU (AMD EPYC)' noenhanced
set xlabel 'aggregate examples/s (p50 step time)'
set yrange [9.50:-0.5]
set xrange [0:99.4772]
plot 'impact-resnet18-fp32-cpu-amd-epyc-i64-b16-2r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($3 == 1 ? $2/2 : NaN):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#999999' title 'DDP defaults', '' using ($3 == 0 ? $2/2 : NaN):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'variant'
unset output
reset
set encoding utf8
set grid
set key height 1
set logscale x 2
set format x '%.0b %BB'
set key outside below center horizontal
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'comm-cpu-amd-epyc-comm-allreduce-cpu-busbw.png'
set title 'CPU (AMD EPYC),' . "\n" . 'docs/examples/where-the-time-goes/comm_allreduce_cpu.j' . "\n" . 'son: bus bandwidth' noenhanced
set ylabel 'busbw (GB/s)'
set xlabel 'message size (bytes, log2 scale)'
set yrange [0:*]
plot 'comm-cpu-amd-epyc-comm-allreduce-cpu-busbw.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'allreduce, 2 ranks' noenhanced
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'comm-cpu-amd-epyc-comm-allreduce-cpu-busbw.svg'
set title 'CPU (AMD EPYC),' . "\n" . 'docs/examples/where-the-time-goes/comm_allreduce_cpu.j' . "\n" . 'son: bus bandwidth' noenhanced
set ylabel 'busbw (GB/s)'
set xlabel 'message size (bytes, log2 scale)'
set yrange [0:*]
plot 'comm-cpu-amd-epyc-comm-allreduce-cpu-busbw.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'allreduce, 2 ranks' noenhanced
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'telemetry-resnet18-1m-4c-cpu-amd-epyc.png'
set title 'resnet18, 1M/4C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet18-1m-4c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 4 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 1'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'telemetry-resnet18-1m-4c-cpu-amd-epyc.svg'
set title 'resnet18, 1M/4C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet18-1m-4c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 4 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 1'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'telemetry-resnet50-1m-2c-cpu-amd-epyc.png'
set title 'resnet50, 1M/2C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet50-1m-2c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 2 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 1'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'telemetry-resnet50-1m-2c-cpu-amd-epyc.svg'
set title 'resnet50, 1M/2C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet50-1m-2c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 2 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 1'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-2.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-2.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-4r.png'
set title 'resnet18, CPU (AMD EPYC), 4 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:3.7]
plot 'stragglers-resnet18-cpu-amd-epyc-4r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-4r.svg'
set title 'resnet18, CPU (AMD EPYC), 4 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:3.7]
plot 'stragglers-resnet18-cpu-amd-epyc-4r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-4r-2.png'
set title 'resnet18, CPU (AMD EPYC), 4 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:3.7]
plot 'stragglers-resnet18-cpu-amd-epyc-4r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-4r-2.svg'
set title 'resnet18, CPU (AMD EPYC), 4 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:3.7]
plot 'stragglers-resnet18-cpu-amd-epyc-4r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-3.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-3.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-3.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-3.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-4.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-4.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-4.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-4.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet50-cpu-amd-epyc-2r.png'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet50-cpu-amd-epyc-2r.svg'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet50-cpu-amd-epyc-2r-2.png'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet50-cpu-amd-epyc-2r-2.svg'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r-2.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-5.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-5.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-5.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-5.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet50-cpu-amd-epyc-2r-3.png'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r-3.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet50-cpu-amd-epyc-2r-3.svg'
set title 'resnet50, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet50-cpu-amd-epyc-2r-3.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-6.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-6.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-6.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-6.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-7.png'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-7.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'stragglers-resnet18-cpu-amd-epyc-2r-7.svg'
set title 'resnet18, CPU (AMD EPYC), 2 ranks: straggler score per' . "\n" . 'rank (threshold 0.95)' noenhanced
set ylabel 'score = fastest compute-only step / own'
set yrange [0:1.1]
set key outside below center horizontal
set xlabel 'rank'
set xtics 1
set style fill solid 0.7 border -1
set boxwidth 0.6 relative
set xrange [-0.7:1.7]
plot 'stragglers-resnet18-cpu-amd-epyc-2r-7.dat' using 1:2 with boxes title 'score', 0.95 with lines dt 2 lw 2 title 'threshold 0.95'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'burnin-resnet18-no-ddp-cpu-amd-epyc.png'
set title 'resnet18, no ddp, CPU (AMD EPYC): burn-in, ex/s per' . "\n" . 'rank per 5 s window' noenhanced
set xlabel 'window start (s)'
set ylabel 'examples/s per rank'
set yrange [0:*]
set key outside below center horizontal
plot 'burnin-resnet18-no-ddp-cpu-amd-epyc.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'rank 0'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'burnin-resnet18-no-ddp-cpu-amd-epyc.svg'
set title 'resnet18, no ddp, CPU (AMD EPYC): burn-in, ex/s per' . "\n" . 'rank per 5 s window' noenhanced
set xlabel 'window start (s)'
set ylabel 'examples/s per rank'
set yrange [0:*]
set key outside below center horizontal
plot 'burnin-resnet18-no-ddp-cpu-amd-epyc.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'rank 0'
unset output
reset
set encoding utf8
set grid
set key height 1
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'burnin-resnet18-1m-2c-cpu-amd-epyc.png'
set title 'resnet18, 1M/2C, CPU (AMD EPYC): burn-in, ex/s per' . "\n" . 'rank per 5 s window' noenhanced
set xlabel 'window start (s)'
set ylabel 'examples/s per rank'
set yrange [0:*]
set key outside below center horizontal
plot 'burnin-resnet18-1m-2c-cpu-amd-epyc.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'rank 0', '' index 1 using 1:2 with linespoints lw 2 pt 7 title 'rank 1'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'burnin-resnet18-1m-2c-cpu-amd-epyc.svg'
set title 'resnet18, 1M/2C, CPU (AMD EPYC): burn-in, ex/s per' . "\n" . 'rank per 5 s window' noenhanced
set xlabel 'window start (s)'
set ylabel 'examples/s per rank'
set yrange [0:*]
set key outside below center horizontal
plot 'burnin-resnet18-1m-2c-cpu-amd-epyc.dat' index 0 using 1:2 with linespoints lw 2 pt 7 title 'rank 0', '' index 1 using 1:2 with linespoints lw 2 pt 7 title 'rank 1'
unset output
reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.0819 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.8953
set bmargin at screen 0.2033
set terminal pngcairo size 560,659 font 'DejaVu Sans,11.25'
set output 'memory-resnet50-cpu-amd-epyc-i64-b8-2r.png'
set title 'Memory per rank by strategy' . "\n" . 'resnet50, CPU (AMD EPYC), 2 ranks, batch 8 per rank' noenhanced
set xlabel 'MiB per rank'
set yrange [5.50:-0.5]
set xrange [0:724.986]
plot 'memory-resnet50-cpu-amd-epyc-i64-b8-2r.dat' using (0):($0-0.3092):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0-0.0132):($2/2):(0.1316) with boxxyerror lc rgb '#4477aa' title 'peak RSS (process, upper bound)', '' using ($3/2):($0+0.2500):($3/2):(0.1316) with boxxyerror lc rgb '#ddaa33' title 'model state (params + grads + optimizer)'
unset output
set terminal svg size 560,659 font 'DejaVu Sans,15' background '#ffffff'
set output 'memory-resnet50-cpu-amd-epyc-i64-b8-2r.svg'
set title 'Memory per rank by strategy' . "\n" . 'resnet50, CPU (AMD EPYC), 2 ranks, batch 8 per rank' noenhanced
set xlabel 'MiB per rank'
set yrange [5.50:-0.5]
set xrange [0:724.986]
plot 'memory-resnet50-cpu-amd-epyc-i64-b8-2r.dat' using (0):($0-0.3092):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0-0.0132):($2/2):(0.1316) with boxxyerror lc rgb '#4477aa' title 'peak RSS (process, upper bound)', '' using ($3/2):($0+0.2500):($3/2):(0.1316) with boxxyerror lc rgb '#ddaa33' title 'model state (params + grads + optimizer)'
unset output
