# validate.gp — predicted against measured on log-log axes, with the y = x
# line and +-10% bands, one colour per device.
# Input: the CSV of `xpusim validate --format csv` (rows that failed are skipped).
# Usage: gnuplot -e "in='f.csv'; out='plots/out/validate'; devices='a b c'; title='...'" plots/validate.gp
if (!exists("in")) in = 'plots/out/validate.csv'
if (!exists("out")) out = 'plots/out/validate'
if (!exists("title")) title = 'xpusim validate: predicted vs measured'
if (!exists("devices")) devices = ''

set datafile separator ','
set logscale xy
set format x '%g'
set format y '%g'
set xlabel 'measured'
set ylabel 'predicted'
set key outside right top noenhanced
set grid
set size ratio -1
set title title noenhanced
# spans of all values, for the reference lines
stats in using 7 skip 1 nooutput name 'M'
stats in using 8 skip 1 nooutput name 'P'
lo = (M_min < P_min ? M_min : P_min) / 1.5
hi = (M_max > P_max ? M_max : P_max) * 1.5
set xrange [lo:hi]
set yrange [lo:hi]
set samples 2

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 900,720 dynamic; set output out.'.svg' }
    else { set terminal pngcairo size 900,720; set output out.'.png' }
    plot x with lines lc rgb 'black' lw 1 title 'y = x', \
         1.1 * x with lines lc rgb '#999999' dt 2 title '+10%', \
         0.9 * x with lines lc rgb '#999999' dt 2 title '-10%', \
         for [d in devices] in using 7:(strcol(3) eq d && strcol(12) eq 'ok' ? $8 : NaN) skip 1 \
             with points pt 7 ps 0.8 title d
    unset output
}
