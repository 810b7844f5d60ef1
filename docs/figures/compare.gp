# gnuplot compare.gp -> compare.svg (written by gtsim; the numbers are in compare.dat)
set terminal svg size 1000,600 fixed enhanced font 'sans,12' background rgb 'white'
set output 'compare.svg'
set title 'gtsim compare: mlp_small' noenhanced
set ylabel 'time (us)'
set yrange [0:*]
set xrange [-1:11]
set xtics ('mlp_up' 0.5, 'gelu' 3.5, 'mlp_down' 6.5, 'dispatch (once per workload)' 9.5) rotate by -30 noenhanced
set grid ytics
set key outside below noenhanced
set style fill solid 0.85 border rgb 'black'
plot 'compare.dat' index 0 using 1:($2/2):($1-0.45):($1+0.45):(0):2 with boxxyerror fs solid 0.85 lc rgb '#1f77b4' title 'NVIDIA A100-SXM4-40GB: device', \
  'compare.dat' index 0 using 1:($2+$3/2):($1-0.45):($1+0.45):2:($2+$3) with boxxyerror fs pattern 4 lc rgb '#1f77b4' title 'NVIDIA A100-SXM4-40GB: launch', \
  'compare.dat' index 1 using 1:($2/2):($1-0.45):($1+0.45):(0):2 with boxxyerror fs solid 0.85 lc rgb '#ff7f0e' title 'Google TPU v5e: device', \
  'compare.dat' index 1 using 1:($2+$3/2):($1-0.45):($1+0.45):2:($2+$3) with boxxyerror fs pattern 4 lc rgb '#ff7f0e' title 'Google TPU v5e: dispatch'
