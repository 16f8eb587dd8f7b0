# roofline.gp — one device's roofline with the ops of one optimizer step
# placed on it: x, the op's FLOPs per DRAM byte (arithmetic intensity); y,
# the FLOP/s it achieves in the prediction; the area of its point, its share
# of the step time. The roofs are the device's datasheet peaks: the matrix
# engine in the format the matmuls run in, the fp32 vector units, and DRAM
# bandwidth; an op under both roofs is held back by something else
# (launches, latency, the efficiencies of the device model).
# Input: the CSV of `xpusim plot roofline` (op, phase, kind, kind_id, flops,
# bytes, time_s, intensity, achieved_tflops, time_share) and, beside it,
# roofline-device.csv (device, matmul_dtype, matmul_peak_tflops,
# vector_peak_tflops, dram_gbs, shown_time_share), both read by column name.
# Usage: gnuplot -e "in='figs/roofline.csv'; out='figs/roofline'; title='...'" plots/roofline.gp
if (!exists("in")) in = 'roofline.csv'
if (!exists("out")) out = 'roofline'
if (!exists("title")) title = 'xpusim: roofline'
dev = in[1:strlen(in) - 4].'-device.csv'

set datafile separator comma
set datafile columnheaders
stats dev using (column("matmul_peak_tflops")) nooutput name 'PM'
stats dev using (column("vector_peak_tflops")) nooutput name 'PV'
stats dev using (column("dram_gbs")) nooutput name 'BW'
stats dev using (column("shown_time_share")) nooutput name 'SH'
dtype = ''
stats dev using (dtype = strcol("matmul_dtype"), 0) nooutput
pm = PM_max
pv = PV_max
bw = BW_max / 1000.0   # TB/s: TFLOP/s = intensity (FLOP/byte) x TB/s
stats in using (column("intensity")) nooutput name 'X'
stats in using (column("achieved_tflops")) nooutput name 'Y'
if (X_records < 1) { print sprintf("roofline.gp: no op in %s", in); exit status 1 }
# the kinds present, in kind_id order (op.h's xs_op_kind)
array has[16]
do for [i = 1:16] { has[i] = 0 }
stats in using (has[int(column("kind_id")) + 1] = 1, 0) nooutput
present = ''
do for [i = 1:13] { if (has[i]) { present = present.sprintf(' %d', i) } }
kid(k) = int(word(present, k))
kindname(i) = word('gemm bgemm attention eltwise norm softmax reduce embed cast copy loss optimizer comm', i)
array pal[13] = ['#332288', '#88ccee', '#117733', '#44aa99', '#999933', '#ddcc77', '#cc6677', '#882255', '#aa4499', '#77aadd', '#ee8866', '#cc3311', '#bbbbbb']

xlo = X_min / 3 < 0.01 ? X_min / 3 : 0.01
xhi = X_max * 3 > pm / bw * 4 ? X_max * 3 : pm / bw * 4
ylo = Y_min / 3
yhi = pm * 2.5
set logscale xy
set xrange [xlo : xhi]
set yrange [ylo : yhi]
set format x '%g'
set format y '%g'
set xlabel 'arithmetic intensity (FLOPs per DRAM byte)'
set ylabel 'achieved (TFLOP/s)'
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4'
set key outside right top vertical noenhanced title 'op kind (area: share of step time)'
set title title noenhanced font ',13'
set bmargin 7
set label 1 sprintf("roofs: the datasheet peaks (%s matrix engine %g TFLOP/s, fp32 vector units %g TFLOP/s, DRAM %g GB/s)\nops shown: %.0f%% of the step time; the rest has no FLOPs or no bytes (copies, gathers) or is host wait", dtype, pm, pv, BW_max, SH_max * 100) \
    at screen 0.5, screen 0.045 center font ',9' tc rgb '#555555'
roof(x, p) = x * bw < p ? x * bw : p
size(s) = 0.6 + 9 * sqrt(s)

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1100,640 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1100,640 font 'sans,11'; set output out.'.png' }
    set samples 400
    plot roof(x, pm) with lines lw 2 lc rgb '#222222' title sprintf('%s matrix roof', dtype), \
         roof(x, pv) with lines lw 2 dt 2 lc rgb '#666666' title 'fp32 vector roof', \
         for [k = 1:words(present)] in using (int(column("kind_id")) == kid(k) - 1 ? column("intensity") : NaN):(column("achieved_tflops")):(size(column("time_share"))) \
            with points pt 7 ps variable lc rgb pal[kid(k)] title kindname(kid(k))
    unset output
}
