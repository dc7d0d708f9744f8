reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.0567 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.9276
set bmargin at screen 0.1406
set terminal pngcairo size 560,953 font 'DejaVu Sans,11.25'
set output 'single-gpu-count-throughput.png'
set title 'Throughput per GPU of the configurations measured at' . "\n" . 'one size' noenhanced
set xlabel 'examples/s per GPU (whiskers: p95 to p5 step)'
set yrange [9.50:-0.5]
set xrange [0:4775.3]
plot 'single-gpu-count-throughput.dat' using (0):($0-0.3067):1 with labels left offset 0.4,0 noenhanced notitle, '' using (0):($0-0.0533):2 with labels left offset 0.4,0 noenhanced notitle, '' using ($3/2):($0+0.2467):($3/2):(0.1333) with boxxyerror lc rgb '#4477aa' title 'DDP (p50 step)', '' using 3:($0+0.2467):4:5 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 6:($0+0.2467) with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
set terminal svg size 560,953 font 'DejaVu Sans,15' background '#ffffff'
set output 'single-gpu-count-throughput.svg'
set title 'Throughput per GPU of the configurations measured at' . "\n" . 'one size' noenhanced
set xlabel 'examples/s per GPU (whiskers: p95 to p5 step)'
set yrange [9.50:-0.5]
set xrange [0:4775.3]
plot 'single-gpu-count-throughput.dat' using (0):($0-0.3067):1 with labels left offset 0.4,0 noenhanced notitle, '' using (0):($0-0.0533):2 with labels left offset 0.4,0 noenhanced notitle, '' using ($3/2):($0+0.2467):($3/2):(0.1333) with boxxyerror lc rgb '#4477aa' title 'DDP (p50 step)', '' using 3:($0+0.2467):4:5 with xerrorbars pt 7 ps 0.4 lc rgb 'black' title 'p95 - p5', '' using 6:($0+0.2467) with points pt 6 ps 1.6 lc rgb '#cc3311' title 'no DDP'
unset output
reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.1371 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.7665
set bmargin at screen 0.3401
set terminal pngcairo size 560,394 font 'DejaVu Sans,11.25'
set output 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.png'
set title 'Memory per GPU by strategy' . "\n" . 'resnet50, NVIDIA H100 80GB HBM3, 1 GPU, batch 32 per' . "\n" . 'GPU' noenhanced
set xlabel 'MiB per GPU'
set yrange [2.50:-0.5]
set xrange [0:3450.52]
plot 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'peak allocated (CUDA caching allocator)'
unset output
set terminal svg size 560,394 font 'DejaVu Sans,15' background '#ffffff'
set output 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.svg'
set title 'Memory per GPU by strategy' . "\n" . 'resnet50, NVIDIA H100 80GB HBM3, 1 GPU, batch 32 per' . "\n" . 'GPU' noenhanced
set xlabel 'MiB per GPU'
set yrange [2.50:-0.5]
set xrange [0:3450.52]
plot 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b32-1r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'peak allocated (CUDA caching allocator)'
unset output
reset
set encoding utf8
set grid
set key height 1
set style fill solid 0.5 border -1
unset ytics
set grid xtics
set key at screen 0.5, screen 0.1598 center top horizontal samplen 2
set lmargin 2
set rmargin 3
set tmargin at screen 0.7278
set bmargin at screen 0.3964
set terminal pngcairo size 560,338 font 'DejaVu Sans,11.25'
set output 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b256-1r.png'
set title 'Memory per GPU by strategy' . "\n" . 'resnet50, NVIDIA H100 80GB HBM3, 1 GPU, batch 256 per' . "\n" . 'GPU' noenhanced
set xlabel 'MiB per GPU'
set yrange [1.50:-0.5]
set xrange [0:12615.9]
plot 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b256-1r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'peak allocated (CUDA caching allocator)'
unset output
set terminal svg size 560,338 font 'DejaVu Sans,15' background '#ffffff'
set output 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b256-1r.svg'
set title 'Memory per GPU by strategy' . "\n" . 'resnet50, NVIDIA H100 80GB HBM3, 1 GPU, batch 256 per' . "\n" . 'GPU' noenhanced
set xlabel 'MiB per GPU'
set yrange [1.50:-0.5]
set xrange [0:12615.9]
plot 'memory-resnet50-nvidia-h100-80gb-hbm3-i224-b256-1r.dat' using (0):($0-0.2411):1 with labels left offset 0.4,0 noenhanced notitle, '' using ($2/2):($0+0.1607):($2/2):(0.1786) with boxxyerror lc rgb '#4477aa' title 'peak allocated (CUDA caching allocator)'
unset output
