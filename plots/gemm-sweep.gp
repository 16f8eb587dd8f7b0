# gemm-sweep.gp — predicted GEMM throughput against one dimension swept in
# steps of 1: tile quantization (drops just past each multiple of the tile)
# and wave quantization (cliffs just past each multiple of SMs x CTAs).
# Input: the CSV of `xpusim gemm ... --sweep n=1:N`.
# Usage: gnuplot -e "in='plots/out/sweep.csv'; out='plots/out/sweep'; title='...'" plots/gemm-sweep.gp
if (!exists("in")) in = 'plots/out/gemm-sweep.csv'
if (!exists("out")) out = 'plots/out/gemm-sweep'
if (!exists("title")) title = 'xpusim gemm sweep'

set datafile separator ','
set key top left
if (!exists("dim")) dim = 'n'
set xlabel dim noenhanced
set ylabel 'predicted TFLOP/s'
set y2label 'waves'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid
set title title noenhanced

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1100,560 dynamic; set output out.'.svg' }
    else { set terminal pngcairo size 1100,560; set output out.'.png' }
    # odd values leave fp16 rows 2-byte aligned: the slower kernels, plotted apart
    plot in using 1:(int($1) % 2 == 0 ? $3 : NaN) skip 1 with points pt 7 ps 0.25 lc rgb '#4477aa' title 'TFLOP/s, even', \
         '' using 1:(int($1) % 2 == 1 ? $3 : NaN) skip 1 with points pt 7 ps 0.25 lc rgb '#bbbbbb' title 'TFLOP/s, odd (unaligned)', \
         '' every 2::1 using 1:9 skip 1 axes x1y2 with steps lw 1 lc rgb '#cc6677' title 'waves (even)'
    unset output
}
