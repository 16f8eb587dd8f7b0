/* fuzz_grid.c — libFuzzer harness over the command-line grammars of sweep
 * and compare's ranking: the input is lines "vary KEY=V1,V2,A:B:STEP" and
 * "weights time=W,..." (anything else is skipped), parsed as --vary and
 * --weights are; a grid that parses is expanded (its first and last points)
 * and checked against 1 and 3 devices, and the weights rank a small set
 * made of the input's bytes (score, Pareto, filters). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void expand(const xs_sweep_grid *g)
{
    char buf[XS_SWEEP_VALUE_MAX + 1];
    size_t last = g->points - 1;
    for (size_t a = 0; a < g->naxes; a++) {
        for (size_t p = 0; p < g->points && p < 16; p++)
            xs_sweep_value(g, p, a, buf, sizeof buf);
        xs_sweep_value(g, last, a, buf, sizeof buf);
        if (strcmp(buf, "?") == 0)
            abort(); /* every point of the grid has a value on every axis */
    }
}

static void rank(const xs_weights *w, const uint8_t *data, size_t size)
{
    xs_rank_item it[16];
    size_t n = 0;
    for (size_t i = 0; i + 2 < size && n < 16; i += 3, n++)
        it[n] = (xs_rank_item){data[i], data[i + 1] / 16.0, data[i + 2], data[i] / 255.0,
                               data[i + 1] & 1, 0, 0};
    xs_rank_score(it, n, w);
    xs_error err;
    if (xs_rank_pareto(it, n, &err))
        return;
    for (size_t i = 0; i < n; i++) {
        if (it[i].score < 0 || it[i].score > 1 + 1e-12 || (it[i].pareto && !it[i].candidate))
            abort(); /* a score is in [0, 1]; only a candidate is on the frontier */
        (void)xs_rank_within(&it[i], data[0], data[size - 1] / 10.0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    xs_sweep_grid g;
    xs_sweep_init(&g);
    xs_weights w = XS_WEIGHTS_DEFAULT;
    xs_error err;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strncmp(line, "vary ", 5) == 0) {
            size_t before = g.points;
            if (xs_sweep_add(&g, line + 5, &err) != XS_OK && g.points != before)
                abort(); /* a refused axis leaves the grid as it was */
        } else if (strncmp(line, "weights ", 8) == 0) {
            xs_weights_parse(line + 8, &w, &err);
        }
    }
    if (g.points == 0 || g.points > XS_SWEEP_MAX_ROWS)
        abort();
    expand(&g);
    const char *sets[] = {"train.batch=8", "train.precision=fp32"};
    xs_sweep_check(&g, 1, sets, 2, &err);
    xs_sweep_check(&g, 3, NULL, 0, &err);
    rank(&w, data, size);
    xs_sweep_free(&g);
    free(text);
    return 0;
}
