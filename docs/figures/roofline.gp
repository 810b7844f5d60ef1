# gnuplot roofline.gp -> roofline.svg (written by gtsim; the numbers are in roofline.dat)
set terminal svg size 960,600 fixed enhanced font 'sans,12' background rgb 'white'
set output 'roofline.svg'
set title 'gtsim roofline: NVIDIA H200: mlp_small.yaml' noenhanced
set logscale xy
set grid xtics ytics mxtics mytics
set xlabel 'arithmetic intensity (FLOP per DRAM byte)'
set ylabel 'TFLOP/s'
set xrange [0.1:1577.5]
set key outside right top noenhanced
plot 'roofline.dat' index 0 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'f32 (simulated, ridge 14.5 FLOP/B)', \
  'roofline.dat' index 1 using 1:2 with lines lw 1 dt 2 lc rgb '#1f77b4' title 'f32 (datasheet, ridge 14.4 FLOP/B)', \
  'roofline.dat' index 2 using 1:2 with lines lw 2 lc rgb '#d62728' title 'tf32 (simulated, ridge 78.5 FLOP/B)', \
  'roofline.dat' index 3 using 1:2 with lines lw 1 dt 2 lc rgb '#d62728' title 'tf32 (datasheet, ridge 70.3 FLOP/B)', \
  'roofline.dat' index 4 using 1:2 with lines lw 2 lc rgb '#2ca02c' title 'f16 (simulated, ridge 157 FLOP/B)', \
  'roofline.dat' index 5 using 1:2 with lines lw 1 dt 2 lc rgb '#2ca02c' title 'f16 (datasheet, ridge 141 FLOP/B)', \
  'roofline.dat' index 6 using 1:2 with lines lw 2 lc rgb '#9467bd' title 'bf16 (simulated, ridge 158 FLOP/B)', \
  'roofline.dat' index 7 using 1:2 with lines lw 1 dt 2 lc rgb '#9467bd' title 'bf16 (datasheet, ridge 140 FLOP/B)', \
  'roofline.dat' index 8 using 1:2 with lines lw 2 lc rgb '#ff7f0e' title 'e4m3 (simulated, ridge 85 FLOP/B)', \
  'roofline.dat' index 9 using 1:2 with lines lw 1 dt 2 lc rgb '#ff7f0e' title 'e4m3 (datasheet, ridge 72.1 FLOP/B)', \
  'roofline.dat' index 10 using 1:2 with points pt 7 ps 1.2 lc rgb 'black' title 'kernels (simulated)', \
  'roofline.dat' index 10 using 1:2:3 with labels offset 0.8,0.6 left font ',10' noenhanced notitle
