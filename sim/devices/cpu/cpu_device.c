/* cpu_device.c — the schema of a class-cpu device file (a host calibrated
 * by `xpusim calibrate --backend cpu`), the names of the kernels it costs,
 * and the relations between its fields that no single field can check.
 * `calibrate` writes the file from this same table (xs_dev_write). */
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "device_fields.h"

/* rows that store into the xs_cpu_params record (device_fields.h) */
#define C(m) XS_OWN(xs_cpu_params, m)
#define C_STR(m) XS_OWN_STR(xs_cpu_params, m)

#define KERNEL(fn, name)                                                                      \
    POS("kernels." name ".ns_per_elem", 1, C(k[fn].ns_per_elem),                               \
        "time per element on one core, data beyond L2 (fitted)"),                             \
        NONNEG("kernels." name ".ns_per_elem_sd", C(k[fn].ns_per_elem_sd),                   \
               "its standard deviation from the fit"),                                        \
        POS("kernels." name ".ns_per_elem_hot", 1, C(k[fn].ns_per_elem_hot),                    \
            "time per element on one core, data in L2 (fitted)"),                             \
        NONNEG("kernels." name ".overhead_us", C(k[fn].overhead_us),                         \
               "fixed time per call: fork/join and set-up (fitted intercept)")

static const xs_field CPU_FIELDS[] = {
    ID_ROW,
    STR("name", 1, D_STR(name), "what the host is"),
    CLASS_ROW,
    NOTE_OPT("note", "free text"),
    INT("compute.cores", 1, 4096, C(cores), "cores the kernels run on (one thread each)"),
    POS("compute.clock_mhz", 1, C(clock_mhz), "core clock under vector load"),
    POS("compute.peak_fp32_tflops", 1, D(peak_tflops[XS_FP32]),
        "in-core FP32 FMA peak of all cores (measured)"),
    NUM("compute.peak_bf16_tflops", 1, 0, 0, D(peak_tflops[XS_BF16]),
        "in-core bf16 matrix-engine peak of all cores (AMX; 0: none)"),
    STR("compute.isa", 1, C_STR(isa), "amx-bf16, avx512-bf16, avx512, avx2, neon or portable"),
    STR("compute.cpu_model", 1, C_STR(cpu_model), "the processor's model string"),
    STR("compute.cpu_signature", 0, C_STR(cpu_signature),
        "CPUID vendor, family, model and stepping (aarch64: implementer, part, variant, "
        "revision); validate --backend cpu refuses another"),
    NOTE("compute.source", "where the compute figures come from"),
    NOTE_OPT("compute.note", "free text"),
    POS("memory.capacity_gb", 1, D(mem_capacity_gb), "host memory"),
    POS("memory.l2_kb_per_core", 1, C(l2_kb_per_core), "private L2 per core"),
    POS("memory.llc_mb", 1, C(llc_mb), "effective shared last-level cache (measured)"),
    POS("memory.bw_l2_gbs_per_core", 1, C(bw_l2_core), "triad bandwidth, one core, data in L2"),
    NONNEG("memory.bw_l2_gbs_per_core_sd", C(bw_l2_core_sd), "its standard deviation"),
    POS("memory.bw_l2_read_gbs_per_core", 1, C(bw_l2_read_core),
        "read-only bandwidth, one core, data in L2 (feeds the GEMM mainloop)"),
    POS("memory.bw_llc_gbs_per_core", 1, C(bw_llc_core), "triad bandwidth, one core, data in LLC"),
    NONNEG("memory.bw_llc_gbs_per_core_sd", C(bw_llc_core_sd), "its standard deviation"),
    POS("memory.bw_dram_gbs_per_core", 1, C(bw_dram_core), "triad bandwidth, one core, DRAM"),
    NONNEG("memory.bw_dram_gbs_per_core_sd", C(bw_dram_core_sd), "its standard deviation"),
    POS("memory.bw_dram_gbs", 1, D(mem_bw_gbs), "triad bandwidth, all cores, DRAM"),
    NONNEG("memory.bw_dram_gbs_sd", C(bw_dram_all_sd), "its standard deviation"),
    NOTE("memory.source", "where the memory figures come from"),
    NOTE_OPT("memory.note", "free text"),
    POWER_ROWS("power limit of the cores used", "idle power of the cores used"),
    PRICE_ROWS("host-hour"),
    STR("gemm.tiles", 1, C_STR(tiles_text),
        "C block of the GEMM kernels, MxN/S (S, pipeline stages, is not used on CPUs: load latency is in the fitted per-block cost)"),
    INT("gemm.k_bytes_bf16", 1, 4096, C(bf16_blocks.k_bytes),
        "bytes of K one mainloop step of the bf16 kernel consumes"),
    INT("gemm.k_bytes_fp32", 1, 4096, C(fp32_blocks.k_bytes),
        "bytes of K one mainloop step of the fp32 kernel consumes"),
    NOTE("gemm.source", "where the blocking comes from"),
    NOTE_OPT("gemm.note", "free text"),
    FRAC("model.gemm_efficiency_bf16", C(gemm_eff_bf16),
         "bf16 mainloop rate as a fraction of the bf16 peak (fitted)"),
    NONNEG("model.gemm_efficiency_bf16_sd", C(gemm_eff_bf16_sd), "its standard deviation"),
    FRAC("model.gemm_efficiency_fp32", C(gemm_eff_fp32),
         "fp32 mainloop rate as a fraction of the fp32 peak (fitted)"),
    NONNEG("model.gemm_efficiency_fp32_sd", C(gemm_eff_fp32_sd), "its standard deviation"),
    NONNEG("model.block_ns_bf16", C(block_ns_bf16), "fixed cost of one bf16 C block (fitted)"),
    NONNEG("model.block_ns_fp32", C(block_ns_fp32), "fixed cost of one fp32 C block (fitted)"),
    NONNEG("model.gemm_call_us_bf16", C(gemm_call_us_bf16),
           "fixed cost of one bf16 GEMM call: parallel regions, set-up (fitted)"),
    NONNEG("model.gemm_call_us_fp32", C(gemm_call_us_fp32),
           "fixed cost of one fp32 GEMM call (fitted)"),
    POS("model.pack_gbs_per_core", 1, C(pack_gbs_core),
        "operand packing, contiguous rows, bytes read + written per second per core (fitted)"),
    POS("model.pack_transposed_gbs_per_core", 1, C(pack_transposed_gbs_core),
        "operand packing that transposes (32 x 32 squares), per core (fitted)"),
    POS("model.cold_gbs_per_core_bf16", 1, C(cold_gbs_core_bf16),
        "a bf16 GEMM's A, B and C bytes when they are not in cache, per core (fitted)"),
    POS("model.cold_gbs_per_core_fp32", 1, C(cold_gbs_core_fp32),
        "an fp32 GEMM's A, B and C bytes when they are not in cache, per core (fitted)"),
    NONNEG("model.fork_us", C(fork_us), "one OpenMP parallel region on all cores (measured)"),
    NOTE("model.source", "where the model parameters come from"),
    NOTE_OPT("model.note", "free text"),
    KERNEL(XS_FN_ZERO, "zero"),
    KERNEL(XS_FN_ADD, "add"),
    KERNEL(XS_FN_BIAS, "bias"),
    KERNEL(XS_FN_BIAS_GRAD, "bias_grad"),
    KERNEL(XS_FN_DROPOUT, "dropout"),
    KERNEL(XS_FN_DROPOUT_BWD, "dropout_bwd"),
    KERNEL(XS_FN_GELU, "gelu"),
    KERNEL(XS_FN_GELU_BWD, "gelu_bwd"),
    KERNEL(XS_FN_LAYERNORM, "layernorm"),
    KERNEL(XS_FN_LAYERNORM_BWD, "layernorm_bwd"),
    KERNEL(XS_FN_SOFTMAX, "softmax"),
    KERNEL(XS_FN_SOFTMAX_BWD, "softmax_bwd"),
    KERNEL(XS_FN_XENT, "xent"),
    KERNEL(XS_FN_EMBED, "embed"),
    KERNEL(XS_FN_EMBED_BWD, "embed_bwd"),
    KERNEL(XS_FN_CAST, "cast"),
    KERNEL(XS_FN_COPY, "copy"),
    KERNEL(XS_FN_ADAN, "adan"),
    KERNEL(XS_FN_ADAMW, "adamw"),
    NOTE("kernels.source", "where the kernel costs come from"),
    POS("threads.region_us", 0, C(thr.region_us),
        "one OpenMP parallel region (fork, join barrier) on one thread (fitted over the thread "
        "sweep; absent: a file calibrated before it, which `xpusim threads` refuses)"),
    NONNEG_OPT("threads.region_us_per_thread", C(thr.region_us_per_thread),
               "what each further thread adds to a parallel region (fitted)"),
    POS("threads.lstm_ns_per_mac", 0, C(thr.lstm_ns_per_mac),
        "the LSTM kernel's recurrent step: time per multiply-add on one core, weights in L2 "
        "(fitted)"),
    POS("threads.lstm_gate_ns", 0, C(thr.lstm_gate_ns),
        "the LSTM kernel's gate update: time per hidden unit and sample on one core (fitted)"),
    POS("threads.lstm_bf16_ns_per_mac", 0, C(thr.lstm_bf16_ns_per_mac),
        "the bf16 LSTM step: time per multiply-add on one core, bf16 weights in L2 (fitted; "
        "absent: a sweep made before the bf16 kernel, which `xpusim threads` refuses for bf16)"),
    POS("threads.lstm_bf16_gate_ns", 0, C(thr.lstm_bf16_gate_ns),
        "the bf16 LSTM step's gate update, h rounded to bf16: time per hidden unit and sample "
        "(fitted)"),
    NOTE_OPT("threads.source", "where the thread-model figures come from"),
    {"calibration", XS_F_OBJ, 0, 0, 0, 0, NULL, XS_NOSTORE, 0,
     "provenance of a calibrated file: host, date, command, kernel versions, fit residuals", NULL},
};

const xs_field *xs_cpu_fields(size_t *n)
{
    *n = sizeof CPU_FIELDS / sizeof CPU_FIELDS[0];
    return CPU_FIELDS;
}

/* Relations between the fields of a CPU file; then its tile list, for both
 * kernels. */
int xs_cpu_check_fields(xs_device *d, const char *path, xs_error *err)
{
    xs_cpu_params *c = xs_cpu_of(d);
    if (d->mem_bw_gbs > c->bw_dram_core * (double)c->cores * 1.5)
        return xs_error_set(err, XS_ERANGE,
                            "%s: field 'memory.bw_dram_gbs' must not exceed cores x "
                            "memory.bw_dram_gbs_per_core (%g GB/s) by more than half, got %g",
                            path, c->bw_dram_core * (double)c->cores, d->mem_bw_gbs);
    int rc = xs_gemm_parse_tiles(c->tiles_text, c->bf16_blocks.tiles, &c->bf16_blocks.n, path,
                                 "gemm.tiles", err);
    const xs_cpu_threads *t = &c->thr;
    int any = t->region_us > 0 || t->region_us_per_thread > 0 || t->lstm_ns_per_mac > 0 ||
              t->lstm_gate_ns > 0;
    if (rc == XS_OK && any && !(t->region_us > 0 && t->lstm_ns_per_mac > 0 && t->lstm_gate_ns > 0))
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: section 'threads' must give region_us, lstm_ns_per_mac and "
                          "lstm_gate_ns together (a thread sweep writes all of them)",
                          path);
    if (rc == XS_OK && (t->lstm_bf16_ns_per_mac > 0) != (t->lstm_bf16_gate_ns > 0))
        rc = xs_error_set(err, XS_EFIELD,
                          "%s: section 'threads' must give lstm_bf16_ns_per_mac and "
                          "lstm_bf16_gate_ns together, or neither",
                          path);
    memcpy(c->fp32_blocks.tiles, c->bf16_blocks.tiles, sizeof c->bf16_blocks.tiles);
    c->fp32_blocks.n = c->bf16_blocks.n;
    return rc;
}
