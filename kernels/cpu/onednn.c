/* onednn.c — see onednn.h. One primitive a shape, created once, so timings
 * measure execution, not oneDNN's kernel selection. */
#include "onednn.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef XS_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

struct xs_dnnl_matmul {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c;
    char impl[64]; /* the implementation oneDNN chose ("brg:avx2", "ref:any") */
};

int xs_dnnl_available(void)
{
    return 1;
}

xs_dnnl_matmul *xs_dnnl_matmul_create(int bf16, size_t m, size_t n, size_t k, const void *A,
                                      const void *B, float *C)
{
    xs_dnnl_matmul *mm = calloc(1, sizeof *mm);
    if (!mm)
        return NULL;
    dnnl_data_type_t in = bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_dims_t ad = {(dnnl_dim_t)m, (dnnl_dim_t)k}, bd = {(dnnl_dim_t)k, (dnnl_dim_t)n},
                cd = {(dnnl_dim_t)m, (dnnl_dim_t)n};
    dnnl_memory_desc_t amd, bmd, cmd;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    int ok = dnnl_engine_create(&mm->engine, dnnl_cpu, 0) == dnnl_success &&
             dnnl_stream_create(&mm->stream, mm->engine, dnnl_stream_default_flags) ==
                 dnnl_success &&
             dnnl_memory_desc_init_by_tag(&amd, 2, ad, in, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&bmd, 2, bd, in, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&cmd, 2, cd, dnnl_f32, dnnl_ab) == dnnl_success &&
             dnnl_matmul_desc_init(&desc, &amd, &bmd, NULL, &cmd) == dnnl_success &&
             dnnl_primitive_desc_create(&pd, &desc, NULL, mm->engine, NULL) == dnnl_success &&
             dnnl_primitive_create(&mm->prim, pd) == dnnl_success &&
             dnnl_memory_create(&mm->a, &amd, mm->engine, (void *)A) == dnnl_success &&
             dnnl_memory_create(&mm->b, &bmd, mm->engine, (void *)B) == dnnl_success &&
             dnnl_memory_create(&mm->c, &cmd, mm->engine, C) == dnnl_success;
    const char *impl = NULL;
    if (ok && dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
        impl)
        snprintf(mm->impl, sizeof mm->impl, "%s", impl);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (!ok) {
        xs_dnnl_matmul_free(mm);
        return NULL;
    }
    return mm;
}

/* oneDNN's instruction-set levels nearest to each kernel set: the same
 * vector width and bf16 units (oneDNN has no level below SSE4.1, which the
 * portable set, compiled for baseline x86-64, is held against) */
const char *xs_dnnl_limit_isa(xs_cpu_isa isa)
{
    static const struct {
        dnnl_cpu_isa_t v;
        const char *name;
    } L[XS_ISA_COUNT] = {
        [XS_ISA_PORTABLE] = {dnnl_cpu_isa_sse41, "SSE41"},
        [XS_ISA_NEON] = {dnnl_cpu_isa_all, "ALL"},
        [XS_ISA_AVX2] = {dnnl_cpu_isa_avx2, "AVX2"},
        [XS_ISA_AVX512] = {dnnl_cpu_isa_avx512_core, "AVX512_CORE"},
        [XS_ISA_AVX512_BF16] = {dnnl_cpu_isa_avx512_core_bf16, "AVX512_CORE_BF16"},
        [XS_ISA_AMX_BF16] = {dnnl_cpu_isa_avx512_core_amx, "AVX512_CORE_AMX"},
    };
    if ((int)isa < 0 || isa >= XS_ISA_COUNT)
        return NULL;
    /* ONEDNN_MAX_CPU_ISA, when set, is oneDNN's own cap: left to it */
    if (getenv("ONEDNN_MAX_CPU_ISA") || getenv("DNNL_MAX_CPU_ISA"))
        return "as ONEDNN_MAX_CPU_ISA says";
    return dnnl_set_max_cpu_isa(L[isa].v) == dnnl_success ? L[isa].name : NULL;
}

int xs_dnnl_matmul_run(xs_dnnl_matmul *mm)
{
    dnnl_exec_arg_t args[3] = {
        {DNNL_ARG_SRC, mm->a}, {DNNL_ARG_WEIGHTS, mm->b}, {DNNL_ARG_DST, mm->c}};
    if (dnnl_primitive_execute(mm->prim, mm->stream, 3, args) != dnnl_success)
        return -1;
    return dnnl_stream_wait(mm->stream) == dnnl_success ? 0 : -1;
}

const char *xs_dnnl_matmul_impl(const xs_dnnl_matmul *mm)
{
    return mm && mm->impl[0] ? mm->impl : "?";
}

void xs_dnnl_matmul_free(xs_dnnl_matmul *mm)
{
    if (!mm)
        return;
    if (mm->a)
        dnnl_memory_destroy(mm->a);
    if (mm->b)
        dnnl_memory_destroy(mm->b);
    if (mm->c)
        dnnl_memory_destroy(mm->c);
    if (mm->prim)
        dnnl_primitive_destroy(mm->prim);
    if (mm->stream)
        dnnl_stream_destroy(mm->stream);
    if (mm->engine)
        dnnl_engine_destroy(mm->engine);
    free(mm);
}

#else /* built without oneDNN */

int xs_dnnl_available(void)
{
    return 0;
}

xs_dnnl_matmul *xs_dnnl_matmul_create(int bf16, size_t m, size_t n, size_t k, const void *A,
                                      const void *B, float *C)
{
    (void)bf16, (void)m, (void)n, (void)k, (void)A, (void)B, (void)C;
    return NULL;
}

int xs_dnnl_matmul_run(xs_dnnl_matmul *mm)
{
    (void)mm;
    return -1;
}

const char *xs_dnnl_limit_isa(xs_cpu_isa isa)
{
    (void)isa;
    return NULL;
}

void xs_dnnl_matmul_free(xs_dnnl_matmul *mm)
{
    (void)mm;
}

const char *xs_dnnl_matmul_impl(const xs_dnnl_matmul *mm)
{
    (void)mm;
    return "?";
}

#endif
