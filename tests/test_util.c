/* test_util.c — see test_util.h. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include <math.h>

#include "fileio.h"
#include "gate.h"
#include "paths.h"

static char tmpdir[256];

static void cleanup(void)
{
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0)
            fprintf(stderr, "warning: could not remove %s\n", tmpdir);
    }
}

const char *tu_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/xpusim-tests-XXXXXX");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(cleanup);
    }
    return tmpdir;
}

const char *tu_write(const char *name, const char *text)
{
    static char paths[8][512];
    static int slot;
    char *path = paths[slot++ % 8];
    snprintf(path, 512, "%s/%s", tu_tmpdir(), name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

cJSON *tu_load_json(const char *repo_path)
{
    char *text = NULL;
    if (xs_read_file(repo_path, &text, NULL, NULL) != 0) {
        fprintf(stderr, "cannot read %s (run the tests from the source root)\n", repo_path);
        exit(1);
    }
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (!doc) {
        fprintf(stderr, "cannot parse %s\n", repo_path);
        exit(1);
    }
    return doc;
}

const char *tu_write_json(const char *name, const cJSON *doc)
{
    char *text = cJSON_Print(doc);
    const char *path = tu_write(name, text);
    free(text);
    return path;
}

static char *slurp(const char *path)
{
    char *text = NULL;
    if (xs_read_file(path, &text, NULL, NULL) != 0)
        return strdup("");
    return text;
}

tu_result tu_run(const char *args)
{
    return tu_run_stdin(args, "/dev/null");
}

tu_result tu_run_stdin(const char *args, const char *input)
{
    const char *bin = getenv("XPUSIM_BIN");
    if (!bin)
        bin = "./xpusim";
    char out[512], err[512], cmd[4096];
    snprintf(out, sizeof out, "%s/run.out", tu_tmpdir());
    snprintf(err, sizeof err, "%s/run.err", tu_tmpdir());
    snprintf(cmd, sizeof cmd, "%s %s >'%s' 2>'%s' <'%s'", bin, args, out, err, input);
    int st = system(cmd);
    tu_result r;
    r.status = st == -1 ? -1 : WEXITSTATUS(st);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

void tu_run_free(tu_result *r)
{
    free(r->out);
    free(r->err);
}

int tu_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

xs_device tu_device(const char *id)
{
    char path[512];
    xs_error err;
    xs_device d;
    memset(&d, 0, sizeof d);
    CU_ASSERT_EQUAL(xs_resolve("devices", id, path, sizeof path, &err), XS_OK);
    CU_ASSERT_EQUAL(xs_dev_load(path, &d, &err), XS_OK);
    return d;
}

static int gated(int rc, const char *const *sets, int n, const xs_scenario *s, xs_error *err)
{
    if (rc == XS_OK && (rc = xs_wl_gate(s, err)) != XS_OK)
        xs_scn_name_sets(sets, n, err);
    return rc;
}

int tu_scn_open_gated(const char *id_or_path, const char *const *sets, int n, xs_scenario *s,
                      xs_error *err)
{
    return gated(xs_scn_open(id_or_path, sets, n, s, err), sets, n, s, err);
}

int tu_scn_load_gated(const char *path, const char *const *sets, int n, xs_scenario *s,
                      xs_error *err)
{
    return gated(xs_scn_load(path, sets, n, s, err), sets, n, s, err);
}

int tu_build_err(const char *id, const char *const *sets, int n, xs_scenario *s, xs_workload *wl,
                 xs_error *err)
{
    int rc = xs_scn_open(id, sets, n, s, err);
    if (!rc && (rc = xs_wl_build(s, wl, err)) != XS_OK)
        xs_scn_name_sets(sets, n, err);
    return rc;
}

int tu_build(const char *id, const char *const *sets, int n, xs_scenario *s, xs_workload *wl)
{
    xs_error err;
    int rc = tu_build_err(id, sets, n, s, wl, &err);
    if (rc)
        fprintf(stderr, "\n%s\n", err.msg);
    return rc;
}

const xs_op *tu_find_op(const xs_workload *wl, const char *name, int layer)
{
    for (size_t i = 0; i < wl->n; i++)
        if (strcmp(wl->ops[i].name, name) == 0 && wl->ops[i].layer == layer)
            return &wl->ops[i];
    return NULL;
}

void tu_check_memory_balance(const xs_scenario *s, const xs_workload *wl)
{
    double saved = 0, freed = 0, grads = 0, slack = 0, fslack = 0;
    for (size_t k = 0; k < wl->n; k++) {
        const xs_op_mem *m = &wl->ops[k].mem;
        saved += m->saved;
        freed += m->freed;
        grads += m->grads;
        slack += m->slack;
        fslack += m->freed_slack;
        CU_ASSERT(m->temp >= 0);
        /* kept by forward ops, and by a checkpointed layer's forward run
         * again in the backward */
        CU_ASSERT(wl->ops[k].phase == XS_PH_FWD || m->saved == 0 ||
                  (s->train.checkpointing && wl->ops[k].phase == XS_PH_BWD));
    }
    double p = wl->trainable_params;
    CU_ASSERT(saved > 0);
    CU_ASSERT_DOUBLE_EQUAL(freed, saved, 1e-9 * saved);
    CU_ASSERT_DOUBLE_EQUAL(slack, fslack, 1e-9 * saved);
    CU_ASSERT_DOUBLE_EQUAL(grads, p, 1e-9 * p);
    if (fabs(grads - p) > 1e-9 * p || fabs(freed - saved) > 1e-9 * saved)
        fprintf(stderr, "\n%s: saved %.6g freed %.6g grads %.6g trainable params %.6g\n", s->id,
                saved, freed, grads, p);
}

void tu_check_balance_recipes(const char *id, const char *const (*recipes)[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int k = 0;
        while (k < 4 && recipes[i][k])
            k++;
        xs_scenario s;
        xs_workload wl;
        CU_ASSERT_EQUAL_FATAL(tu_build(id, recipes[i], k, &s, &wl), XS_OK);
        tu_check_memory_balance(&s, &wl);
        xs_wl_free(&wl);
    }
}

double tu_compute_sum(const xs_workload *wl, const xs_prediction *p)
{
    double t = 0;
    for (size_t i = 0; i < wl->n; i++)
        if (wl->ops[i].kind != XS_OP_COMM)
            t += p->est[i].time_s * (double)wl->ops[i].count;
    return t;
}

void tu_check_two_streams(const xs_workload *wl, const xs_prediction *p)
{
    double compute = tu_compute_sum(wl, p);
    CU_ASSERT(p->comm_s > 0);
    CU_ASSERT(p->device_time_s >= compute * (1 - 1e-12));
    CU_ASSERT(p->device_time_s >= p->comm_s * (1 - 1e-12));
    CU_ASSERT(p->device_time_s <= compute + p->comm_s + p->contention_s + 1e-12);
    CU_ASSERT(p->exposed_tail_s + p->serial_s <= p->comm_s + 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(p->samples_per_s, (double)wl->samples_per_step / p->step_time_s,
                           1e-9 * p->samples_per_s);
}
