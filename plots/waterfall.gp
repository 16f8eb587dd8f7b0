# waterfall.gp — the optimisation waterfall of `xpusim steps`: samples/s of
# each step as bars (left axis) with its speed-up over the start above it,
# and the whole run's cost as points (right axis). A skipped step (applied
# 0) has no numbers: its place is kept and marked, as the table keeps it.
# Input: the CSV of `xpusim steps --format csv` (or `xpusim plot
# waterfall`), read by column name.
# Usage: gnuplot -e "in='figs/waterfall.csv'; out='figs/waterfall'; title='...'" plots/waterfall.gp
if (!exists("in")) in = 'waterfall.csv'
if (!exists("out")) out = 'waterfall'
if (!exists("title")) title = 'xpusim steps'

set datafile separator comma
set datafile columnheaders
isnum(v) = v == v

stats in using (column("index")) nooutput name 'N'
n = N_records
stats in using (column("applied") == 1 ? column("samples_per_s") : NaN) nooutput name 'Y'
stats in using (column("applied") == 1 ? column("cost_usd") : NaN) nooutput name 'C'

set xrange [-0.6 : n - 0.4]
set xtics nomirror scale 0 noenhanced
set ylabel 'predicted throughput (samples/s)' tc rgb '#4477aa'
set y2label 'predicted cost of the whole run (USD)' tc rgb '#cc3311'
set ytics nomirror tc rgb '#4477aa'
set y2tics tc rgb '#cc3311'
set format y2 '$%g'
# headroom for the speed-up labels above the highest bar
set yrange [0 : Y_max * 1.18]
set y2range [0 : C_max * 1.18]
set grid ytics
set style fill solid 0.75 border -1
set boxwidth 0.6
set bmargin 6
set lmargin 11
set rmargin 11
set tmargin 5
set key at screen 0.5, screen 0.915 center top horizontal noenhanced
set label 2 title at screen 0.5, screen 0.965 center noenhanced font ',13'
set label 1 'each step keeps the ones left of it; above a bar: samples/s over the start; a skipped step changes nothing (its reason: xpusim steps)' \
    at screen 0.5, screen 0.025 center font ',9' tc rgb '#555555'

# the tick of a step: its name, and its last override's value ("amp_bf16",
# "multi_tensor", "244")
val(s) = (p = strstrt(s, '='), p > 0 ? val(s[p + 1:]) : s)
tic(dummy) = column("applied") == 1 ? (column("index") == 0 ? 'start (all off)' : strcol("step")."\n".val(strcol("setting"))) : strcol("step")."\n(skipped)"

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1000,560 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1000,560 font 'sans,11'; set output out.'.png' }
    plot in using (column("index")):(column("applied") == 1 ? column("samples_per_s") : NaN):xtic(tic(0)) \
            with boxes lc rgb '#4477aa' title 'throughput (samples/s)', \
         '' using (column("index")):(column("applied") == 1 ? column("samples_per_s") : NaN):(sprintf('x%.2f', column("speedup_vs_start"))) \
            with labels offset 0, 0.8 font ',10' notitle, \
         '' using (column("index")):(column("applied") == 1 ? NaN : Y_max * 0.04):('skipped') \
            with labels tc rgb '#888888' font ',10' notitle, \
         '' using (column("index")):(column("applied") == 1 ? column("cost_usd") : NaN) axes x1y2 \
            with linespoints pt 7 ps 1.2 lw 1.5 lc rgb '#cc3311' title 'run cost (USD)'
    unset output
}
