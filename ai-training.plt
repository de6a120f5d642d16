set terminal png size 900,500
set output "ai-training.png"
set title "Data-parallel training: speedup of iteration time over ib-hdr"
set xlabel "fabric"
set ylabel "speedup over ib-hdr (x)"

set xtics ("ib-hdr" 0, "ib-hdr-sharp" 1)
set xrange [-0.5:1.5]
set yrange [0:*]
set grid y
plot "-"  title "resnet50 (32 GPUs)" with linespoints lw 2 pt 7 ps 1.5
0 1
1 1.00451
e
