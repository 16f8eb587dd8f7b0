# validate.gp — two figures from the rows of `xpusim validate`:
#   OUT.png/.svg       predicted against measured, one log-log panel per
#                      metric, with the y = x line and the +-10% lines, one
#                      colour (and point shape) per device, the same in every
#                      panel;
#   OUT-bias.png/.svg  the signed error of every row (error_pct as is), by
#                      metric and device, with each group's mean: + is
#                      optimistic (predicted faster, or less power or memory,
#                      than measured), the sign xs_verror_pct gives.
# Input: the CSV of `xpusim validate --format csv`, read by column name
# (device, scenario, metric, measured, predicted, error_pct, status); rows
# whose status is not 'ok' have no numbers and are left out. Devices and
# metrics are the ones in the file, in their first row's order.
# Usage: gnuplot -e "in='f.csv'; out='plots/out/validate'; title='...'" plots/validate.gp
if (!exists("in")) in = 'plots/out/validate.csv'
if (!exists("out")) out = 'plots/out/validate'
if (!exists("title")) title = 'xpusim validate: predicted vs measured'

set datafile separator comma
set datafile columnheaders

isnum(v) = v == v
ok(dummy) = strcol("status") eq 'ok' && isnum(column("measured")) && isnum(column("predicted"))
has(list, w) = strstrt(' '.list, ' '.w.' ') > 0
addword(list, w) = has(list, w) ? list : list.w.' '
# samples_per_s -> samples/s, step_time_s -> s, avg_power_w -> W
unit(m) = strstrt(m, '_per_s') ? m[1:strstrt(m, '_per_s') - 1].'/s' : (m[strlen(m) - 1:] eq '_s' ? 's' : (m[strlen(m) - 1:] eq '_w' ? 'W' : ''))
# a rate is faster when higher, a time when lower; power is neither
rate(m) = strstrt(m, '_per_') > 0
power(m) = m[strlen(m) - 1:] eq '_w'
memory(m) = strstrt(m, 'memory') > 0
sel(m, d) = ok(0) && strcol("metric") eq m && (d eq '' || strcol("device") eq d)

devs = ''
mets = ''
stats in using (ok(0) ? (devs = addword(devs, strcol("device")), mets = addword(mets, strcol("metric")), 1) : NaN) \
    nooutput name 'ALL'
nd = words(devs)
nm = words(mets)
if (nm < 1) { print sprintf("validate.gp: no predicted row in %s", in); exit status 1 }
array kind[nm]    # what each metric's rows are: kernels (scenario '-'), runs or both

# one colour and one shape per device (Okabe-Ito colours, then more); 10
# colours and 7 shapes: no two of the first 70 devices look alike
colors = '#0072b2 #e69f00 #009e73 #d55e00 #cc79a7 #56b4e9 #000000 #999933 #882255 #44aa99'
shapes = '7 5 9 13 11 15 3'
dcol(i) = word(colors, (i - 1) % words(colors) + 1)
dpt(i) = int(word(shapes, (i - 1) % words(shapes) + 1))

# ---- figure 1: predicted against measured, one panel per metric -------------
ncol = nm <= 3 ? nm : 2
nrow = int(ceil(1.0 * nm / ncol))
pw = 470          # panel, pixels
kw = 230          # key strip on the right
th = 50           # title
W = ncol * pw + kw
H = nrow * pw + th

do for [fmt in 'pngcairo svg'] {
    # the svg terminal draws points larger than pngcairo: pz evens them
    if (fmt eq 'svg') { set terminal svg size W,H dynamic font 'sans,11'; set output out.'.svg'; pz = 0.8 }
    else { set terminal pngcairo size W,H font 'sans,11'; set output out.'.png'; pz = 1.1 }
    set multiplot title title noenhanced font ',13'
    set logscale xy
    set grid
    set size ratio -1
    set samples 2
    unset key
    do for [j = 1:nm] {
        m = word(mets, j)
        set autoscale xy      # stats keeps to fixed ranges: free them first
        stats in using (sel(m, '') ? column("measured") : NaN) nooutput name 'M'
        stats in using (sel(m, '') ? column("predicted") : NaN) nooutput name 'P'
        stats in using (sel(m, '') ? (strcol("scenario") eq '-' ? 1 : 0) : NaN) nooutput name 'K'
        lo = (M_min < P_min ? M_min : P_min) / 1.3
        hi = (M_max > P_max ? M_max : P_max) * 1.3
        set xrange [lo:hi]
        set yrange [lo:hi]
        f = hi / lo > 1000 ? '10^{%L}' : '%g'
        set format x f
        set format y f
        # a panel inside one or two decades gets ticks at 1, 2, 4, 8 x 10^n,
        # else the log axis would label only the decades it does not reach
        if (hi / lo < 30) {
            t0 = 10 ** floor(log10(lo))
            set xtics t0, 2
            set ytics t0, 2
        } else {
            set xtics autofreq
            set ytics autofreq
        }
        u = unit(m)
        set xlabel (u eq '' ? 'measured' : sprintf('measured (%s)', u)) noenhanced
        set ylabel (u eq '' ? 'predicted' : sprintf('predicted (%s)', u)) noenhanced
        kind[j] = K_sum == K_records ? 'single kernels' : (K_sum == 0 ? 'whole runs' : 'runs and kernels')
        set title sprintf('%s: %d rows, %s', m, M_records, kind[j]) noenhanced
        c = (j - 1) % ncol
        r = (j - 1) / ncol
        set origin 1.0 * c * pw / W, 1.0 * (H - th - (r + 1) * pw) / H
        set size 1.0 * pw / W, 1.0 * pw / H
        plot x with lines lc rgb 'black' lw 1, \
             1.1 * x with lines lc rgb '#777777' dt 2, \
             0.9 * x with lines lc rgb '#777777' dt 2, \
             for [i = 1:nd] in using (sel(m, word(devs, i)) ? column("measured") : NaN):(column("predicted")) \
                 with points pt dpt(i) ps pz lc rgb dcol(i)
    }
    # the key: one entry per device, in a strip of its own (NaN: entries only)
    unset logscale xy
    unset title
    unset xlabel
    unset ylabel
    unset grid
    unset border
    unset tics
    set size noratio
    set xrange [0:1]
    set yrange [0:1]
    set origin 1.0 * ncol * pw / W, 0
    set size 1.0 * kw / W, 1.0 * (H - th) / H
    set key top left Left reverse noenhanced samplen 2
    plot for [i = 1:nd] NaN with points pt dpt(i) ps 1.3 * pz lc rgb dcol(i) title word(devs, i), \
         NaN with lines lc rgb 'black' lw 1 title 'y = x', \
         NaN with lines lc rgb '#777777' dt 2 title 'y = x +-10%'
    unset multiplot
    unset output
    set border
    set tics
}

# ---- figure 2: signed error by metric and device ----------------------------
reset
set datafile separator comma
set datafile columnheaders
faster(m) = column("error_pct")
frac(v) = v - floor(v)
jitter(i) = 0.34 * (2 * frac(i * 0.6180339887) - 1)     # spread, the same every run

array gm[nm * nd]
array gd[nm * nd]
array gmean[nm * nd]
array gn[nm * nd]
ng = 0
tics = ''
do for [j = 1:nm] {
    m = word(mets, j)
    do for [i = 1:nd] {
        d = word(devs, i)
        # count first: stats over no valid point only warns and sets nothing
        stats in using (ok(0) ? sel(m, d) : NaN) nooutput name 'C'
        if (C_sum > 0) {
            stats in using (sel(m, d) ? faster(m) : NaN) nooutput name 'E'
            ng = ng + 1
            gm[ng] = j
            gd[ng] = i
            gmean[ng] = E_mean
            gn[ng] = E_records
            tics = tics.sprintf('%s"%s\nn %d, mean %+.1f%%%%" %d', (ng > 1 ? ', ' : ''), d, E_records, E_mean, ng)
        }
    }
}
eval('set xtics ('.tics.') nomirror scale 0 noenhanced font ",9"')
set xrange [0.4 : ng + 0.6]
set offsets 0, 0, graph 0.05, graph 0.05
set ytics nomirror
set format y '%g%%'
set ylabel 'error (%), + = optimistic'
set grid ytics
unset key
set title 'xpusim validate: signed error by metric and device (+ = predicted faster, or less power, than measured)' noenhanced font ',13' offset 0, 2.5
set tmargin 8
set rmargin 9     # room for a heading over a narrow last group
set bmargin 5
set label 1 'samples/s and tokens/s rows: predicted / measured - 1; time, power and memory rows: 1 - predicted / measured (error_pct). Black bar: mean; dashed: +-10%.' \
    at screen 0.5, screen 0.025 center font ',9' tc rgb '#555555' noenhanced
# a dashed separator and a heading over each metric's group
g0 = 1
do for [j = 1:nm] {
    g1 = g0
    do for [g = g0:ng] { if (gm[g] == j) { g1 = g } }
    set label 10 + j sprintf("%s\n%s\n%s", word(mets, j), kind[j], power(word(mets, j)) || memory(word(mets, j)) ? '+ = predicted lower' : rate(word(mets, j)) ? 'higher is faster' : 'lower is faster') \
        at first (g0 + g1) / 2.0, graph 1.06 center noenhanced font ',10'
    if (j > 1) { set arrow 100 + j from first g0 - 0.5, graph 0 to first g0 - 0.5, graph 1 nohead dt 3 lc rgb '#555555' }
    g0 = g1 + 1
}
do for [g = 1:ng] {
    set arrow g from first g - 0.42, first gmean[g] to first g + 0.42, first gmean[g] nohead lw 3 lc rgb 'black' front
}
W2 = ng * 170 + 220
W2 = W2 < 900 ? 900 : W2

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size W2,600 dynamic font 'sans,11'; set output out.'-bias.svg'; pz = 0.75 }
    else { set terminal pngcairo size W2,600 font 'sans,11'; set output out.'-bias.png'; pz = 1.0 }
    plot 0 with lines lc rgb 'black' lw 1, \
         10 with lines lc rgb '#777777' dt 2, \
         -10 with lines lc rgb '#777777' dt 2, \
         for [g = 1:ng] in using (sel(word(mets, gm[g]), word(devs, gd[g])) ? g + jitter($0) : NaN):(faster(word(mets, gm[g]))) \
             with points pt dpt(gd[g]) ps pz lc rgb dcol(gd[g])
    unset output
}
