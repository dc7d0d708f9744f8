reset
set encoding utf8
set grid
set style fill solid 0.5 border -1
set ytics scale 0 font ',8' noenhanced
set grid xtics
set key outside below center horizontal
set lmargin 48
set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output 'single-gpu-count-throughput.png'
set title 'Throughput per GPU of the configurations measured at one size' noenhanced
set xlabel 'examples/s per GPU (bar: p50 step; whiskers: p95 to p5 step)'
set yrange [8.6:-0.6]
set xrange [0:4775.3]
plot 'single-gpu-count-throughput.dat' using ($2/2):0:($2/2):(0.35):yticlabels(1) with boxxyerror lc rgb '#4477aa' title 'DDP', '' using 2:0:3:4 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 5:0 with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
set terminal svg size 900,560 font 'DejaVu Sans,11' background '#ffffff'
set output 'single-gpu-count-throughput.svg'
set title 'Throughput per GPU of the configurations measured at one size' noenhanced
set xlabel 'examples/s per GPU (bar: p50 step; whiskers: p95 to p5 step)'
set yrange [8.6:-0.6]
set xrange [0:4775.3]
plot 'single-gpu-count-throughput.dat' using ($2/2):0:($2/2):(0.35):yticlabels(1) with boxxyerror lc rgb '#4477aa' title 'DDP', '' using 2:0:3:4 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 5:0 with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
reset
set encoding utf8
set grid
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-throughput.png'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: aggregate throughput' noenhanced
set ylabel 'throughput (examples/s, all GPUs)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-GPU ex/s x GPUs)'
unset output
set terminal svg size 900,560 font 'DejaVu Sans,11' background '#ffffff'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-throughput.svg'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: aggregate throughput' noenhanced
set ylabel 'throughput (examples/s, all GPUs)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:2 with linespoints lw 2 pt 7 title 'measured', '' using 1:3 with lines dt 2 lw 2 title 'ideal (baseline per-GPU ex/s x GPUs)'
unset output
reset
set encoding utf8
set grid
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-efficiency.png'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: scaling efficiency' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
set terminal svg size 900,560 font 'DejaVu Sans,11' background '#ffffff'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-efficiency.svg'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: scaling efficiency' noenhanced
set ylabel 'efficiency (%)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:110]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:4 with linespoints lw 2 pt 7 title 'efficiency', 100 with lines dt 2 title '100 %'
unset output
reset
set encoding utf8
set grid
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-per-gpu.png'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: per-GPU throughput' noenhanced
set ylabel 'throughput per GPU (examples/s)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:5 with linespoints lw 2 pt 7 title 'per GPU'
unset output
set terminal svg size 900,560 font 'DejaVu Sans,11' background '#ffffff'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-per-gpu.svg'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: per-GPU throughput' noenhanced
set ylabel 'throughput per GPU (examples/s)'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:5 with linespoints lw 2 pt 7 title 'per GPU'
unset output
reset
set encoding utf8
set grid
set logscale x 2
set key outside below center horizontal
set terminal pngcairo size 900,560 font 'DejaVu Sans,11'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-latency.png'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: time per iteration' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
set terminal svg size 900,560 font 'DejaVu Sans,11' background '#ffffff'
set output 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32-latency.svg'
set title 'resnet18, fp32 (cuDNN TF32), gloo, cuDNN benchmark off, NVIDIA H100 80GB HBM3: weak scaling, batch 32 per GPU, 224x224: time per iteration' noenhanced
set ylabel 'seconds per iteration'
set xlabel 'GPUs (ranks, log2 scale)'
set xrange [0.7:2.8]
set yrange [0:*]
plot 'weak-resnet18-fp32-cudnn-tf32-gloo-cudnn-benchmark-off-nvidia-h100-80gb-hbm3-i224-b32.dat' using 1:7:6:8 with yerrorlines lw 2 pt 7 title 'p50, whiskers p5-p95'
unset output
