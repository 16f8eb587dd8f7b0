/* predict.c — the xpusim library from C: BERT-large fine-tuning on an A100
 * at two batch sizes, the step's five slowest ops, and a comparison of
 * three devices ranked by run time and cost.
 *
 *   cc predict.c $(pkg-config --cflags --libs xpusim) -o predict && ./predict */
#include <stdio.h>
#include <stdlib.h>

#include <xpusim.h>

static int slowest_first(const void *a, const void *b)
{
    double x = ((const xs_op_row *)a)->time_s, y = ((const xs_op_row *)b)->time_s;
    return (x < y) - (x > y);
}

int main(void)
{
    xs_status st;
    xs_device_h *a100 = NULL;
    xs_scenario_h *scn = NULL;
    xs_op_row *ops = NULL;
    xs_run_row *rows = NULL;
    int rc = 1;
    printf("libxpusim %s\n", xs_lib_version());
    if (xs_device_open("a100-sxm4-80gb", &a100, &st))
        goto fail;
    const int batches[] = {16, 32};
    for (int i = 0; i < 2; i++) {
        char set[32];
        snprintf(set, sizeof set, "train.batch=%d", batches[i]);
        const char *sets[] = {set};
        xs_summary sum;
        size_t nops;
        xs_scenario_free(scn);
        if (xs_scenario_open("bert-large-squad", sets, 1, &scn, &st))
            goto fail;
        xs_free(ops);
        if (xs_predict_run(a100, scn, &sum, &ops, &nops, &st))
            goto fail;
        printf("%s on %s, %s: step %.1f ms, %.0f samples/s, MFU %.0f%%, %.1f GB of %.0f GB, "
               "run %.2f h, %.2f kWh, $%.2f\n",
               xs_scenario_id(scn), xs_device_id(a100), set, sum.step_time_s * 1e3,
               sum.samples_per_s, sum.mfu * 100, sum.memory_gb, sum.capacity_gb,
               sum.run_time_s / 3600, sum.run_energy_kwh, sum.run_cost_usd);
        if (i == 1) {
            qsort(ops, nops, sizeof *ops, slowest_first);
            printf("  the slowest of its %zu ops:\n", nops);
            for (size_t k = 0; k < 5 && k < nops; k++)
                printf("  %-28s layer %3d %-4s %-9s %7.3f ms  %s-bound\n", ops[k].name,
                       ops[k].layer, ops[k].phase, ops[k].kind, ops[k].time_s * 1e3,
                       ops[k].bound);
        }
    }
    const char *ids[] = {"a100-sxm4-80gb", "h100-sxm5-80gb", "l4"};
    xs_device_h *devs[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        if (xs_device_open(ids[i], &devs[i], &st)) {
            for (int k = 0; k < i; k++)
                xs_device_free(devs[k]);
            goto fail;
        }
    xs_grid_opts opts = {.devices = (const xs_device_h *const *)devs, .ndevices = 3};
    size_t n = 0;
    int crc = xs_compare("bert-large-squad", NULL, 0, &opts, &rows, &n, &st);
    for (int i = 0; i < 3; i++)
        xs_device_free(devs[i]);
    if (crc)
        goto fail;
    printf("compare (time=1,cost=1):\n");
    for (size_t i = 0; i < n; i++)
        printf("  %-16s score %.2f%s  %.2f h  $%.2f\n", rows[i].device, rows[i].score,
               rows[i].pareto ? " pareto" : "       ", rows[i].run_time_s / 3600,
               rows[i].run_cost_usd);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "predict: %s\n", st.msg);
done:
    xs_free(rows);
    xs_free(ops);
    xs_scenario_free(scn);
    xs_device_free(a100);
    return rc;
}
