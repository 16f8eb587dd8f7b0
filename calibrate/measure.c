/* measure.c — see measure.h. */
#include "measure.h"
#include "grow.h"

#include <stdlib.h>

#include "fileio.h"
#include "strbuf.h"

int xs_meas_add(xs_meas_list *l, const xs_meas *m)
{
    xs_meas *grown = xs_grow(l->v, &l->cap, l->n, sizeof *grown, 64);
    if (!grown)
        return XS_ENOMEM;
    l->v = grown;
    l->v[l->n++] = *m;
    return XS_OK;
}

void xs_meas_free(xs_meas_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

int xs_meas_write_csv(const xs_meas_list *l, const char *path, xs_error *err)
{
    xs_strbuf sb = {0};
    xs_sb_printf(&sb, "%s\n", XS_MEAS_CSV_HEADER);
    for (size_t i = 0; i < l->n; i++) {
        const xs_meas *m = &l->v[i];
        xs_sb_printf(&sb, "%s,%s,%d,%lld,%lld,%lld,%d,%d,%.17g,%.17g,%.17g,%.6e,%.6e,%.6e,%.4f,%d,"
                          "%.4g,%.4g\n",
                     m->bench, m->name, m->threads, m->m, m->n, m->k, m->ta, m->tb, m->elems,
                     m->bytes, m->flops, m->r.median_s, m->r.q1_s, m->r.q3_s, m->r.rel_iqr,
                     m->r.reps, m->r.gbs, m->r.gflops);
    }
    if (sb.failed) {
        xs_sb_free(&sb);
        return xs_error_set(err, XS_ENOMEM, "%s: out of memory formatting measurements", path);
    }
    int rc = xs_write_atomic(path, sb.data ? sb.data : "", sb.len, err);
    xs_sb_free(&sb);
    return rc;
}
