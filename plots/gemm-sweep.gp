# gemm-sweep.gp — predicted GEMM throughput against one dimension swept in
# steps of 1: tile quantization (drops just past each multiple of the tile)
# and wave quantization (cliffs just past each multiple of SMs x CTAs).
# Two panels on one x axis: TFLOP/s (top) and the number of waves (bottom).
# Input: the CSV of `xpusim gemm ... --sweep DIM=A:B`; the first column is the
# swept dimension, the others are read by name (tflops, waves).
# Usage: gnuplot -e "in='plots/out/sweep.csv'; out='plots/out/sweep'; title='...'" plots/gemm-sweep.gp
if (!exists("in")) in = 'plots/out/gemm-sweep.csv'
if (!exists("out")) out = 'plots/out/gemm-sweep'
if (!exists("title")) title = 'xpusim gemm sweep'

set datafile separator comma
set datafile columnheaders

# the swept dimension is the first column (its name from the header); the
# x axis spans exactly its values
dim = ''
stats in using (dim = columnhead(1), $1) nooutput name 'X'
if (dim eq '') dim = 'swept dimension'
set xrange [X_min : X_max]
# the waves line follows one kind of size: with an odd step (1, the
# default) the even sizes are every other row, from the first even one;
# with an even step every row has the first one's parity
step = X_records > 1 ? (X_max - X_min) / (X_records - 1) : 1
if (int(step) % 2 == 1) { wevery = 2; wfirst = int(X_min) % 2 == 0 ? 0 : 1; wlabel = 'waves (even sizes)' } \
else { wevery = 1; wfirst = 0; wlabel = 'waves' }

even(v) = int(v) % 2 == 0
stats in using (even($1) ? 1 : 0) nooutput name 'E'
nodd = X_records - E_sum
set grid
set offsets 0, 0, graph 0.06, 0   # room above the highest point or step
set lmargin 12
set rmargin 4
set format x '%g'

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1100,700 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1100,700 font 'sans,11'; set output out.'.png' }
    set multiplot title title noenhanced font ',13'

    # top: TFLOP/s, even and odd sizes apart (odd sizes leave fp16 rows
    # 2-byte aligned: the slower kernels); the key sits above the panel
    set origin 0, 0.36
    set size 1, 0.58
    set tmargin 3
    set bmargin 1
    set format x ''
    unset xlabel
    set ylabel 'predicted throughput (TFLOP/s)'
    set yrange [0:*]
    set key tmargin center horizontal width -6 noenhanced
    # the points are small; the key shows them larger (NaN: key entries only)
    plot in using 1:(even($1) ? column("tflops") : NaN) with points pt 7 ps 0.3 lc rgb '#4477aa' notitle, \
         '' using 1:(even($1) ? NaN : column("tflops")) with points pt 7 ps 0.3 lc rgb '#aaaaaa' notitle, \
         NaN with points pt 7 ps 1.2 lc rgb '#4477aa' title (E_sum > 0 ? sprintf('%s even', dim) : ''), \
         NaN with points pt 7 ps 1.2 lc rgb '#aaaaaa' title (nodd > 0 ? sprintf('%s odd (fp16: rows only 2-byte aligned)', dim) : '')

    # bottom: waves of CTAs over the SMs
    set origin 0, 0
    set size 1, 0.38
    set tmargin 0.5
    set bmargin 4
    set format x '%g'
    set xlabel sprintf('%s (elements)', dim) noenhanced
    set ylabel wlabel
    set yrange [0:*]
    set ytics autofreq
    unset key
    plot in every wevery::wfirst using 1:(column("waves")) with steps lw 1.2 lc rgb '#cc3311'
    unset multiplot
    unset output
}
