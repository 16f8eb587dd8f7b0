# compare.gp — one scenario across devices: predicted samples/s (bars, left
# axis) and the whole run's cost in USD (points, right axis).
# Input: the CSV of `xpusim compare --format csv`.
# Usage: gnuplot -e "in='plots/out/compare.csv'; out='plots/out/compare'; title='...'" plots/compare.gp
if (!exists("in")) in = 'plots/out/compare.csv'
if (!exists("out")) out = 'plots/out/compare'
if (!exists("title")) title = 'xpusim compare'

set datafile separator ','
set key top left
set style data histograms
set style fill solid 0.7 border -1
set boxwidth 0.8
set xtics rotate by -35 left nomirror
set ylabel 'predicted samples/s'
set y2label 'predicted run cost (USD)'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid ytics
set title title noenhanced

do for [fmt in 'pngcairo svg'] {
    if (fmt eq 'svg') { set terminal svg size 1000,560 dynamic; set output out.'.svg' }
    else { set terminal pngcairo size 1000,560; set output out.'.png' }
    plot in using 4:xtic(1) skip 1 title 'samples/s' lc rgb '#4477aa', \
         '' using 0:10 skip 1 axes x1y2 with linespoints pt 7 ps 1.2 lw 2 lc rgb '#cc6677' title 'run $'
    unset output
}
