/* fit.c — see fit.h. */
#include "fit.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

double xs_fit_eval(const xs_fit *f, const double *x)
{
    double s = 0;
    for (int j = 0; j < f->p; j++)
        s += f->coef[j] * x[j];
    return s;
}

/* One weighted fit over the features in use; 0 or a GSL error code. */
static int solve(const double *X, const double *y, int n, int p, const int *used, xs_fit *out)
{
    int q = 0, col[XS_FIT_MAXP];
    for (int j = 0; j < p; j++)
        if (used[j])
            col[q++] = j;
    if (q == 0 || n < q)
        return GSL_EINVAL;
    gsl_matrix *A = gsl_matrix_alloc((size_t)n, (size_t)q), *cov = gsl_matrix_alloc((size_t)q, (size_t)q);
    gsl_vector *b = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n),
               *c = gsl_vector_alloc((size_t)q);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)q);
    int rc = GSL_ENOMEM;
    if (A && cov && b && w && c && ws) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < q; j++)
                gsl_matrix_set(A, (size_t)i, (size_t)j, X[i * p + col[j]]);
            gsl_vector_set(b, (size_t)i, y[i]);
            gsl_vector_set(w, (size_t)i, 1.0 / (y[i] * y[i]));
        }
        double chisq;
        rc = gsl_multifit_wlinear(A, w, b, c, cov, &chisq, ws);
        if (!rc) {
            /* chisq is the sum of squared relative residuals: scale the
             * covariance by the residual variance per degree of freedom */
            double dof = n > q ? (double)(n - q) : 1.0, s2 = chisq / dof;
            for (int j = 0; j < p; j++)
                out->coef[j] = out->sd[j] = 0;
            for (int j = 0; j < q; j++) {
                out->coef[col[j]] = gsl_vector_get(c, (size_t)j);
                out->sd[col[j]] = sqrt(fmax(0, gsl_matrix_get(cov, (size_t)j, (size_t)j) * s2));
            }
        }
    }
    gsl_multifit_linear_free(ws);
    gsl_vector_free(c);
    gsl_vector_free(w);
    gsl_vector_free(b);
    gsl_matrix_free(cov);
    gsl_matrix_free(A);
    return rc;
}

int xs_fit_nonneg(const double *X, const double *y, int n, int p, const char *what, xs_fit *out,
                  xs_error *err)
{
    memset(out, 0, sizeof *out);
    if (p < 1 || p > XS_FIT_MAXP || n < p)
        return xs_error_set(err, XS_ERANGE, "fit %s: %d points cannot fit %d parameters", what,
                            n, p);
    for (int i = 0; i < n; i++)
        if (!(y[i] > 0) || !isfinite(y[i]))
            return xs_error_set(err, XS_ERANGE, "fit %s: point %d has time %g (must be > 0)",
                                what, i, y[i]);
    out->n = n;
    out->p = p;
    for (int j = 0; j < p; j++)
        out->used[j] = 1;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = 0;
    for (;;) {
        rc = solve(X, y, n, p, out->used, out);
        if (rc)
            break;
        /* drop the most negative coefficient, if any, and fit again */
        int worst = -1;
        for (int j = 0; j < p; j++)
            if (out->used[j] && out->coef[j] < 0 && (worst < 0 || out->coef[j] < out->coef[worst]))
                worst = j;
        if (worst < 0)
            break;
        out->used[worst] = 0;
        out->coef[worst] = out->sd[worst] = 0;
    }
    gsl_set_error_handler(old);
    if (rc)
        return xs_error_set(err, XS_ERANGE, "fit %s: least squares failed (%s)", what,
                            gsl_strerror(rc));
    double ss = 0, mx = 0;
    for (int i = 0; i < n; i++) {
        double r = (xs_fit_eval(out, X + (size_t)i * p) - y[i]) / y[i];
        ss += r * r;
        mx = fmax(mx, fabs(r));
    }
    out->rms_rel_pct = 100 * sqrt(ss / n);
    out->max_rel_pct = 100 * mx;
    return XS_OK;
}

double xs_fit_round(double x, int digits)
{
    if (x == 0 || !isfinite(x))
        return x;
    double scale = pow(10, digits - 1 - (int)floor(log10(fabs(x))));
    return round(x * scale) / scale;
}
