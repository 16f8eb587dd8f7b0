/* job.c — see job.h. */
#include "job.h"

#include <string.h>

void xs_job_init(xs_job *j)
{
    memset(j, 0, sizeof *j);
}

int xs_job_scenario(xs_job *j, const char *scenario, const char *const *sets, int nsets,
                    xs_error *err)
{
    int rc = xs_scn_open(scenario, sets, nsets, &j->s, err);
    if (!rc && (rc = xs_wl_build(&j->s, &j->wl, err)) != XS_OK)
        xs_scn_name_sets(sets, nsets, err);
    return rc;
}

int xs_job_scenario_compact(xs_job *j, const char *scenario, const char *const *sets,
                            int nsets, xs_error *err)
{
    int rc = xs_scn_open(scenario, sets, nsets, &j->s, err);
    if (!rc && (rc = xs_wl_build_compact(&j->s, &j->wl, NULL, err)) != XS_OK)
        xs_scn_name_sets(sets, nsets, err);
    return rc;
}

int xs_job_predict(xs_job *j, int band, xs_error *err)
{
    int rc = xs_predict(&j->dev, &j->s, &j->wl, &j->p, err);
    if (!rc && band)
        rc = xs_predict_band(&j->dev, &j->s, &j->wl, &j->p, err);
    return rc;
}

void xs_job_free(xs_job *j)
{
    xs_prediction_free(&j->p);
    xs_wl_free(&j->wl);
}
