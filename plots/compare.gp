# compare.gp — one scenario across devices: predicted samples/s (bars, left
# axis) and the whole run's cost in USD (points, right axis), each with its
# band (the device's slow and fast corners) as whiskers. Devices in the
# CSV's order (cheapest run first); a device that cannot run the scenario
# (non-empty 'unavailable') has no numbers, and one whose memory the step
# does not fit (fits 0) has no cost: both are left out.
# Input: the CSV of `xpusim compare --format csv`, read by column name.
# Usage: gnuplot -e "in='plots/out/compare.csv'; out='plots/out/compare'; title='...'" plots/compare.gp
if (!exists("in")) in = 'plots/out/compare.csv'
if (!exists("out")) out = 'plots/out/compare'
if (!exists("title")) title = 'xpusim compare'

set datafile separator comma
set datafile columnheaders

# A predicted row has numbers; a row with a reason in 'unavailable' has
# none. The numbers are tested, not the reason: gnuplot 5.4's strcol() of an
# empty last field can return stale text (the header's), and a quoted
# reason is cut at its first comma. tests/plots_check.sh checks that rows
# with a reason have no numbers and rows without one have them.
isnum(v) = v == v
avail(dummy) = isnum(column("samples_per_s")) && isnum(column("run_cost_usd"))
# x position: the row's rank among the predicted rows (k restarts at row 0)
xpos(dummy) = ($0 == 0 ? k = 0 : 0, avail(0) ? (k = k + 1) - 1 : NaN)

# one pass to count the predicted rows and name their ticks
k = 0
tics = ''
stats in using (r = xpos(0), isnum(r) ? tics = tics.sprintf('%s"%s" %d', (r > 0 ? ', ' : ''), strcol("device"), r) : 0, r) \
    nooutput name 'A'
n = A_records
if (n < 1) { print sprintf("compare.gp: no predicted device in %s", in); exit status 1 }
eval('set xtics ('.tics.')')

bar = 0.42        # bar width; the bar sits left of the tick, the cost point right
bx = -0.2
cx = 0.2
set xrange [-0.6 : n - 0.4]
set xtics rotate by 40 right nomirror scale 0
set bmargin 9
set rmargin 11
set lmargin 11
set ylabel 'predicted throughput (samples/s)' tc rgb '#4477aa'
set y2label 'predicted cost of the whole run (USD)' tc rgb '#cc3311'
set ytics nomirror tc rgb '#4477aa'
set y2tics tc rgb '#cc3311'
set format y2 '$%g'
# headroom above the highest whisker: autoscaling stops at the next tic,
# which can fall on a whisker's cap and clip it
stats in using (avail(0) ? column("samples_per_s_high") : NaN) nooutput name 'Y'
stats in using (avail(0) ? column("run_cost_high_usd") : NaN) nooutput name 'Y2'
set yrange [0 : Y_max * 1.08]
set y2range [0 : Y2_max * 1.08]
set grid ytics
set style fill solid 0.7 border -1
set bars 1.5      # caps of the cost whiskers
set key at screen 0.5, screen 0.915 center top horizontal noenhanced
set tmargin 5
# the title as a label: a title would share the top margin with the key
set label 2 title at screen 0.5, screen 0.965 center noenhanced font ',13'
set label 1 'bars and points: predicted; whiskers: band (slow and fast corners); cost = run time x devices x listed price per device-hour; devices the step does not fit are left out' \
    at screen 0.5, screen 0.02 center font ',9' tc rgb '#555555'

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1100,620 dynamic font 'sans,11'; set output out.'.svg' }
    else { set terminal pngcairo size 1100,620 font 'sans,11'; set output out.'.png' }
    plot in using (xpos(0) + bx):(column("samples_per_s")):(bar) \
            with boxes lc rgb '#4477aa' title 'throughput (samples/s) and band', \
         '' using (xpos(0) + bx):(column("samples_per_s_low")):(0):(column("samples_per_s_high") - column("samples_per_s_low")) \
            with vectors nohead lw 1.5 lc rgb '#223355' notitle, \
         '' using (xpos(0) + cx):(column("run_cost_usd")):(column("run_cost_low_usd")):(column("run_cost_high_usd")) axes x1y2 \
            with yerrorbars pt 7 ps 1.1 lw 1.5 lc rgb '#cc3311' title 'run cost (USD) and band'
    unset output
}
