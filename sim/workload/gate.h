/* gate.h — the one check of a scenario's relations, run when its
 * workload is built (xs_wl_build): what the loader's schema cannot see
 * field by field — a family's shapes (ViT's patches, T5's buckets,
 * Llama's heads), the optimizer's implementations, LoRA's targets and
 * quantization, FP8's shapes, the sizes the arithmetic holds (bounds.h),
 * the cluster and FSDP — and what the builders make of a head. A scenario
 * changed in code after it was loaded (fit's batches, a sweep's points)
 * is checked as it is built, like a loaded one. */
#ifndef XS_GATE_H
#define XS_GATE_H

#include "error.h"
#include "scenario.h"

/* The slowest network between nodes a job may name (GB/s, each way). */
#define XS_NETWORK_GBS_MIN 0.01

/* XS_OK, or the first relation s breaks: one line naming the file s was
 * loaded from (its source; "scenario <id>" for one made in code), the keys
 * and what they must be. The caller that applied --set overrides names
 * them (xs_scn_name_sets). */
int xs_wl_gate(const xs_scenario *s, xs_error *err);

#endif
