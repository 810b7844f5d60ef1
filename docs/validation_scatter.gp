# gnuplot validation_scatter.gp -> validation_scatter.png (written by gtsim validate)
set terminal pngcairo size 900,800
set output 'docs/validation_scatter.png'
set logscale xy
set xlabel 'measured time (us)'
set ylabel 'simulated time (us)'
set title 'gtsim on the H200: simulated vs measured kernel time'
set key top left
set grid
plot x title 'exact' lc rgb 'black', 1.1*x title '+-10%' dt 2 lc rgb 'gray', 0.9*x notitle dt 2 lc rgb 'gray', \
  'docs/validation_scatter.dat' index 0 using 1:2 title 'held-out' pt 7 ps 1.2, \
  'docs/validation_scatter.dat' index 1 using 1:2 title 'other points of fitted benchmarks' pt 6, \
  'docs/validation_scatter.dat' index 2 using 1:2 title 'calibration (fit residual)' pt 2
