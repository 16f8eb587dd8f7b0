/* thr_work.c — see thr_work.h. */
#include "thr_work.h"

#include <stdio.h>
#include <stdlib.h>

#include "grow.h"

int xs_thr_add_group(xs_thr_work *w, const char *name, xs_error *err)
{
    if (w->ngroups == XS_THR_MAX_GROUPS)
        return xs_error_set(err, XS_ERANGE, "%s: more than %d op groups (layers x groups)",
                            w->id, XS_THR_MAX_GROUPS);
    snprintf(w->groups[w->ngroups], sizeof w->groups[0], "%s", name);
    return w->ngroups++;
}

int xs_thr_add_item(xs_thr_work *w, const xs_thr_item *it, xs_error *err)
{
    xs_thr_item *v = xs_grow(w->items, &w->cap, w->n, sizeof *v, 16);
    if (!v)
        return xs_error_set(err, XS_ENOMEM, "out of memory building %s's op list", w->id);
    w->items = v;
    w->items[w->n++] = *it;
    return XS_OK;
}

void xs_thr_work_free(xs_thr_work *w)
{
    free(w->items);
    w->items = NULL;
    w->n = w->cap = 0;
}
