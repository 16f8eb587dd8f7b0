# cost-time.gp — the whole run's cost against its wall-clock time, one
# point a device, both axes logarithmic; the Pareto-optimal devices (no
# other device as fast and as cheap and better on one: `xpusim compare
# --weights`) are joined by the frontier. Down and left is better.
# Input: the CSV of `xpusim plot cost-time`: device, run_time_h, cost_usd,
# energy_kwh, mfu, pareto, reason, fastest first; a device that cannot run
# the step or that it does not fit has no numbers and is left out (its
# reason is in the CSV).
# Usage: gnuplot -e "in='figs/cost-time.csv'; out='figs/cost-time'; title='...'" plots/cost-time.gp
if (!exists("in")) in = 'cost-time.csv'
if (!exists("out")) out = 'cost-time'
if (!exists("title")) title = 'xpusim: run cost and time by device'

set datafile separator comma
set datafile columnheaders
isnum(v) = v == v
stats in using (column("run_time_h")) nooutput name 'X'
stats in using (column("cost_usd")) nooutput name 'Y'
if (X_records < 1) { print sprintf("cost-time.gp: no device that fits in %s", in); exit status 1 }
stats in using (isnum(column("cost_usd")) ? 0 : 1) nooutput name 'L'
left = L_sum

# Each point carries its row number (the devices by run time), named in the
# right margin: names beside the points run over each other where devices
# are close (the A100 and H100 variants). Numbers alternate right-up and
# left-down, so that two devices next in time do not share a side.
names = ''
stats in using (isnum(column("cost_usd")) ? names = names.sprintf("%2d  %s%s\n", int($0) + 1, strcol("device"), column("pareto") == 1 ? ' (Pareto)' : '') : 0) nooutput
# the frontier: the Pareto rows alone, in time order, as CSV with a header
# line (the data settings above apply to it too)
set print $frontier
print 'run_time_h,cost_usd'
unset print
set table $frontier append separator comma
plot in using (column("run_time_h")):(column("cost_usd")) with table if (column("pareto") == 1)
unset table

set logscale xy
# a factor of 2 each side: the numbers beside the points stay inside
set xrange [X_min / 2 : X_max * 2]
set yrange [Y_min / 1.6 : Y_max * 1.6]
set xlabel 'predicted time of the whole run (hours)'
set ylabel 'predicted cost of the whole run (USD)'
# 1-2-3-5 ticks in every decade: a log axis alone ticks only the powers of 10
set xtics ('' 1e-30)
set ytics ('' 1e-30)
do for [e = -4:7] { do for [m in '1 2 3 5'] {
    v = m * 10.0**e
    set xtics add (sprintf('%g', v) v)
    set ytics add (sprintf('$%g', v) v)
} }
set grid xtics ytics lc rgb '#dddddd'
set title title noenhanced font ',13'
set bmargin 6
set label 1 sprintf('cost = run time x devices x listed price per device-hour; devices the step does not fit or that cannot run it: %d, left out', left) \
    at screen 0.5, screen 0.025 center font ',9' tc rgb '#555555'
set rmargin 26
set key at screen 0.99, screen 0.93 right top noenhanced
set label 3 names at screen 0.785, screen 0.78 left font ',10' noenhanced

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1000,620 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1000,620 font 'sans,11'; set output out.'.png' }
    plot $frontier using 1:2 with lines lw 2 lc rgb '#cc3311' title 'Pareto frontier', \
         in using (column("pareto") == 1 ? NaN : column("run_time_h")):(column("cost_usd")) \
            with points pt 7 ps 1.3 lc rgb '#4477aa' title 'device', \
         '' using (column("pareto") == 1 ? column("run_time_h") : NaN):(column("cost_usd")) \
            with points pt 7 ps 1.6 lc rgb '#cc3311' title 'Pareto-optimal device', \
         '' using (int($0) % 2 ? NaN : column("run_time_h")):(column("cost_usd")):(sprintf('%d', int($0) + 1)) \
            with labels left offset 0.7, 0.55 font ',9' notitle, \
         '' using (int($0) % 2 ? column("run_time_h") : NaN):(column("cost_usd")):(sprintf('%d', int($0) + 1)) \
            with labels right offset -0.7, -0.55 font ',9' notitle
    unset output
}
