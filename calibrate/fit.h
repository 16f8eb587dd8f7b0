/* fit.h — least squares for calibration (GSL): y ~ X c over n points and
 * p features, with weights 1/y^2 so every point counts by its relative
 * error (times span microseconds to seconds). Physical parameters cannot
 * be negative: a coefficient that comes out negative has its feature
 * dropped and the fit is redone (an active set). Standard deviations come
 * from the covariance scaled by the residual variance. */
#ifndef XS_CAL_FIT_H
#define XS_CAL_FIT_H

#include "error.h"

#define XS_FIT_MAXP 12

typedef struct {
    int n, p;
    double coef[XS_FIT_MAXP], sd[XS_FIT_MAXP];
    int used[XS_FIT_MAXP];  /* 0: the feature was dropped (coefficient 0) */
    double rms_rel_pct;     /* root mean square of (fit - y) / y, percent */
    double max_rel_pct;     /* largest |fit - y| / y, percent */
} xs_fit;

/* X is row-major n x p; y > 0. XS_ERANGE when n < p or the fit is
 * singular even after dropping features. what names the fit in messages. */
int xs_fit_nonneg(const double *X, const double *y, int n, int p, const char *what, xs_fit *out,
                  xs_error *err);

/* The fitted value at row x (p features). */
double xs_fit_eval(const xs_fit *f, const double *x);

/* x to `digits` significant digits: what a calibration writes of a fitted
 * figure (the fits cannot tell more apart); 0, inf and NaN as they are. */
double xs_fit_round(double x, int digits);

#endif
