/* infer.h — inference scenarios for the thread planner (xpusim threads):
 * an LSTM (layers, hidden, input size) or a Transformer encoder (layers,
 * hidden, heads, FFN) run forward over batch x seq, in fp32. A file is one
 * when it has an "inference" section; the training commands refuse it and
 * say so (scenario.c). The op list is grouped by what a thread count can
 * be set for: per layer the LSTM's input projection and its recurrent
 * steps, and per kind of op the encoder's (its layers are all alike, so a
 * group's count holds for each of them). */
#ifndef XS_INFER_H
#define XS_INFER_H

#include <stdint.h>

#include "error.h"
#include "thr_work.h"

#define XS_INF_FAMILY_CHOICES "lstm|encoder"
typedef enum { XS_INF_LSTM, XS_INF_ENCODER } xs_inf_family;
#define XS_INF_PRECISION_CHOICES "fp32|bf16"
typedef enum { XS_INF_FP32, XS_INF_BF16 } xs_inf_precision;

typedef struct {
    char id[64];
    char description[256];
    int family; /* xs_inf_family */
    int64_t layers, hidden;
    int64_t input_size;  /* lstm */
    int64_t heads, ffn;  /* encoder */
    int64_t batch, seq;
    int precision;       /* xs_inf_precision; bf16: the LSTM's only */
} xs_inf_scenario;

/* 1 when the JSON document at path has an "inference" section (an
 * inference scenario), 0 otherwise or when it cannot be read. */
int xs_inf_is_inference(const char *path);

/* Load an id (scenarios/<id>.json) or a path; every error names the file
 * and the field. sets: --set KEY=VALUE overrides (inference.batch=64). */
int xs_inf_open(const char *id_or_path, const char *const *sets, int nsets, xs_inf_scenario *s,
                xs_error *err);

/* The run's op groups and items (xs_thr_work_free). */
int xs_inf_work(const xs_inf_scenario *s, xs_thr_work *w, xs_error *err);

#endif
