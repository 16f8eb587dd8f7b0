# time-by-kind.gp — one optimizer step on each device, stacked by op kind
# (gemm, bgemm, attention, eltwise, norm, softmax, optimizer, ...) and the
# time the device waits for the host, in ms: the stack is the step time.
# Input: the CSV of `xpusim plot time-by-kind`: device, step_time_ms, fits,
# then one column per op kind present, host_wait last (fastest device
# first). A device whose step does not fit its memory is still drawn (the
# step is predicted) and marked * in its tick.
# Usage: gnuplot -e "in='figs/time-by-kind.csv'; out='figs/time-by-kind'; title='...'" plots/time-by-kind.gp
if (!exists("in")) in = 'time-by-kind.csv'
if (!exists("out")) out = 'time-by-kind'
if (!exists("title")) title = 'xpusim: step time by op kind'

set datafile separator comma
set datafile columnheaders
stats in using (column("step_time_ms")) nooutput name 'T'
ncol = T_columns
if (T_records < 1) { print sprintf("time-by-kind.gp: no device in %s", in); exit status 1 }

set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.65
set xtics nomirror scale 0 rotate by 30 right noenhanced
set ylabel 'predicted time of one optimizer step (ms)'
set yrange [0 : T_max * 1.05]
set grid ytics
set key outside right top vertical noenhanced title 'op kind'
set bmargin 9
set tmargin 3
set title title noenhanced font ',13'
set label 1 'the stack is the step time: the kernels by kind, then the device waiting for the host; * the step does not fit the device memory' \
    at screen 0.5, screen 0.025 center font ',9' tc rgb '#555555'
# Paul Tol's muted and light palettes: 13 kinds and the host wait told apart
array pal[14] = ['#332288', '#88ccee', '#44aa99', '#117733', '#999933', '#ddcc77', '#cc6677', '#882255', '#aa4499', '#77aadd', '#ee8866', '#bbcc33', '#aaaa00', '#bbbbbb']
tic(dummy) = column("fits") == 1 ? strcol("device") : strcol("device").' *'

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1000,600 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1000,600 font 'sans,11'; set output out.'.png' }
    plot for [i = 4:ncol] in using i:xtic(tic(0)) title columnhead(i) lc rgb pal[(i - 4) % 14 + 1]
    unset output
}
