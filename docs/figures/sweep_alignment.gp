# gnuplot sweep_alignment.gp -> sweep_alignment.svg (written by gtsim; the numbers are in sweep_alignment.dat)
set terminal svg size 960,560 fixed enhanced font 'sans,12' background rgb 'white'
set output 'sweep_alignment.svg'
set title 'gtsim sweep: gemm_tiled.kir on NVIDIA H200' noenhanced
set xlabel 'M,N,K' noenhanced
set ylabel 'simulated throughput (TFLOP/s)'
set grid
set key outside right top title 'largest 2^k dividing M,N,K' noenhanced
set yrange [0:*]
plot 'sweep_alignment.dat' index 0 using 1:2 with lines lc rgb '#c0c0c0' notitle, \
  'sweep_alignment.dat' index 1 using 1:2 with points pt 7 ps 0.9 lc rgb '#d62728' title '1 (odd)', \
  'sweep_alignment.dat' index 2 using 1:2 with points pt 7 ps 0.9 lc rgb '#ff7f0e' title '2', \
  'sweep_alignment.dat' index 3 using 1:2 with points pt 7 ps 0.9 lc rgb '#bcbd22' title '4', \
  'sweep_alignment.dat' index 4 using 1:2 with points pt 7 ps 0.9 lc rgb '#2ca02c' title '8', \
  'sweep_alignment.dat' index 5 using 1:2 with points pt 7 ps 0.9 lc rgb '#8c564b' title '256'
