# gnuplot waves.gp -> waves.svg (written by gtsim; the numbers are in waves.dat)
set terminal svg size 1000,620 fixed enhanced font 'sans,12' background rgb 'white'
set output 'waves.svg'
set title 'gtsim waves: 2304x1920x128 bf16, tile 256x128, N over 1024:4608:512 on NVIDIA H200' noenhanced
set xlabel 'N' noenhanced
set ylabel 'simulated time (us)'
set y2label 'waves' textcolor rgb '#d62728'
set ytics nomirror
set y2tics 1 textcolor rgb '#d62728'
set yrange [0:*]
set y2range [0:*]
set offsets graph 0.03, graph 0.03, graph 0.12, 0
set grid
set key outside below noenhanced
plot 'waves.dat' index 0 using 1:3 with linespoints pt 7 ps 0.6 lc rgb '#1f77b4' title 'simulated time', \
  'waves.dat' index 0 using 1:2 axes x1y2 with steps lw 2 lc rgb '#d62728' title 'waves (tiles / wave size)', \
  'waves.dat' index 1 using 1:2:3 axes x1y2 with labels offset 0,0.8 left textcolor rgb '#d62728' notitle, \
  'waves.dat' index 2 using 1:2 with points pt 6 ps 2.2 lw 2 lc rgb 'black' title '--gemm 2304x1920x128'
