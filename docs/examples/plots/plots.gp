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
set terminal pngcairo size 560,440 font 'DejaVu Sans,11.25'
set output 'telemetry-resnet18-1m-4c-cpu-amd-epyc.png'
set title 'resnet18, 1M/4C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet18-1m-4c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 4 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 2'
unset output
set terminal svg size 560,440 font 'DejaVu Sans,15' background '#ffffff'
set output 'telemetry-resnet18-1m-4c-cpu-amd-epyc.svg'
set title 'resnet18, 1M/4C, CPU (AMD EPYC): CPU utilization per' . "\n" . 'rank during the measured iterations' noenhanced
set xlabel 'seconds into the measured iterations'
set ylabel 'CPU utilization (% of one core)'
set yrange [0:*]
set key outside below center horizontal
plot 'telemetry-resnet18-1m-4c-cpu-amd-epyc.dat' index 0 using 1:2:4 with filledcurves fs transparent solid 0.25 title 'min-max over 4 ranks', '' index 0 using 1:3 with linespoints lw 2 pt 7 title 'median over ranks', '' index 1 using 1:2 with linespoints lw 1 pt 7 title 'rank 2'
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
