/* report_steps.h — the optimisation waterfall (steps.h) as a table for
 * people, JSON or CSV for scripts and `xpusim plot waterfall`. Its own
 * header beside report.h: the waterfall's report is all it declares. */
#ifndef XS_REPORT_STEPS_H
#define XS_REPORT_STEPS_H

#include "report.h"
#include "steps.h"

/* The steps in order with, for each applied step, its throughput and cost
 * against the last applied step before it and against the start; skipped
 * steps with their reason. CSV columns and JSON keys: `xpusim steps --help`. */
void xs_report_steps(xs_strbuf *sb, xs_format fmt, const xs_steps *st);

#endif
