/* test_validate.c — the measured-run reader and `xpusim validate`: every
 * kind of row, every way a row can fail, the summaries and the exit status. */
#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "fileio.h"
#include "test_util.h"
#include "kvset.h"
#include "report.h"
#include "device.h"
#include "strbuf.h"
#include "validate.h"

/* What a run on this host says of itself (validate --backend: the host's
 * ceilings, its notes) goes into the report: the JSON's top level, the
 * table's last lines; CSV rows have no room, and the caller prints them. */
/* Kernel rows of issue 41: an isolated call hides its kernel under the
 * harness floor (host_us) until the kernel outlasts it; GEMM rows are
 * summarised by regime, pointwise rows by function; the ratio table leaves
 * out the rows the floor set, and says how many. */
static void kernel_rows_should_be_summarised_by_class_and_device(void)
{
    const char *path = tu_write(
        "kernel-classes.csv",
        "device,scenario,set,metric,value,source\n"
        "a100-pcie-40gb,-,op=pointwise;fn=add;elems=1024;dtype=fp32;host_us=30,time_s,3.1e-5,t\n"
        "a100-pcie-40gb,-,op=pointwise;fn=add;elems=100000000;dtype=fp32;host_us=30,time_s,1e-3,t\n"
        "a100-pcie-40gb,-,op=pointwise;fn=add;elems=100000000;dtype=fp32,time_s,1e-3,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;m=32;n=4096;k=4096;ta=N;tb=T;dtype=fp32;tile=32x128,time_s,1e-4,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;batch=8;m=512;n=512;k=64;ta=N;tb=N;dtype=fp32,time_s,1e-4,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;m=256;n=256;k=65536;ta=N;tb=T;dtype=fp32;split_k=1,time_s,1e-4,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;m=4096;n=4096;k=128;ta=N;tb=T;dtype=fp32,time_s,1e-3,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;m=4096;n=4096;k=4096;ta=N;tb=T;dtype=fp32,time_s,1e-2,t\n"
        "a100-pcie-40gb,-,op=gemm;m=64;n=64;k=64;ta=N;tb=N;dtype=fp32;tile=12y4,time_s,1e-5,t\n"
        "a100-pcie-40gb,-,op=pointwise;fn=sqrt;elems=10;dtype=fp32,time_s,1e-5,t\n"
        "a100-pcie-40gb,-,op=pointwise;fn=add;elems=10;dtype=fp32;host_us=-1,time_s,1e-5,t\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    const char *files[] = {path};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 11);
    for (int i = 0; i < 8; i++)
        CU_ASSERT(rows[i].ok);
    /* the tiny kernel ends long before the host records the end event */
    CU_ASSERT_DOUBLE_EQUAL(rows[0].predicted, 30e-6, 1e-12);
    /* a long one shows through whole, behind the call's dispatch only */
    double dispatch = rows[1].predicted - rows[2].predicted;
    CU_ASSERT(dispatch > 1e-6 && dispatch < 10e-6);
    CU_ASSERT(rows[2].predicted > 30e-6);
    static const char *classes[] = {"pointwise.add", "pointwise.add", "pointwise.add",
                                    "gemm.skinny",   "gemm.batched",  "gemm.split_k",
                                    "gemm.small_k",  "gemm.large"};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_STRING_EQUAL(rows[i].kclass, classes[i]);
    CU_ASSERT(!rows[8].ok && strstr(xs_vrow_reason(&rows[8]), "tile"));
    /* the recorded tile is the kernel timed: A100's 128x128 SGEMM on a
     * 32-row output wastes most of each tile, where the model's own search
     * would take a narrow one */
    const char *tp = tu_write("kernel-tile.csv",
        "device,scenario,set,metric,value,source\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;batch=256;m=32;n=32;k=512;ta=N;tb=N;dtype=fp32,time_s,1e-4,t\n"
        "a100-pcie-40gb,-,op=gemm;layout=row;batch=256;m=32;n=32;k=512;ta=N;tb=N;dtype=fp32;tile=128x128,time_s,1e-4,t\n");
    const char *tfiles[] = {tp};
    xs_vrow *trows;
    size_t tn;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(tfiles, 1, &trows, &tn, &err), XS_OK);
    CU_ASSERT(trows[0].ok && trows[1].ok);
    CU_ASSERT(trows[1].predicted > 1.5 * trows[0].predicted);
    xs_vrows_free(trows, tn);
    CU_ASSERT(!rows[9].ok && strstr(xs_vrow_reason(&rows[9]), "fn"));
    CU_ASSERT(!rows[10].ok && strstr(xs_vrow_reason(&rows[10]), "host_us"));
    xs_vratio q;
    xs_vratio_summarize(rows, n, "pointwise.add", "a100-pcie-40gb", &q);
    CU_ASSERT_EQUAL(q.n, 2);
    CU_ASSERT_EQUAL(q.under_floor, 1);
    CU_ASSERT_DOUBLE_EQUAL(q.median, 0.5 * (rows[1].predicted + rows[2].predicted) / 1e-3, 1e-9);
    xs_strbuf sb = {0};
    xs_report_validate(&sb, XS_FMT_JSON, rows, n);
    cJSON *doc = cJSON_ParseWithOpts(sb.data ? sb.data : "", NULL, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *by = cJSON_GetObjectItem(doc, "by_class_device");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(by), 6);
    cJSON *first = cJSON_GetArrayItem(by, 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(first, "class")->valuestring, "pointwise.add");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(first, "under_floor")->valueint, 1);
    cJSON_Delete(doc);
    xs_sb_free(&sb);
    xs_report_validate(&sb, XS_FMT_TABLE, rows, n);
    CU_ASSERT_PTR_NOT_NULL(sb.data ? strstr(sb.data, "by class and device") : NULL);
    xs_sb_free(&sb);
    xs_vrows_free(rows, n);
}

/* neusight_rows.py on the raw files in dir, its output (opt: -o or
 * --nodes) validated: the rows, *n of them. */
static xs_vrow *converted_rows(const char *dir, const char *opt, size_t *n)
{
    char cmd[1400], out[600];
    snprintf(out, sizeof out, "%s/rows.csv", dir);
    snprintf(cmd, sizeof cmd, "python3 tools/neusight_rows.py --dir %s %s %s 2>/dev/null", dir, opt,
             out);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    const char *files[] = {out};
    xs_vrow *rows = NULL;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, n, &err), XS_OK);
    return rows;
}

/* A conversion of a broken raw file in dir: one line holding want, a
 * non-zero exit, no output and no temporary file left. */
static void conversion_should_refuse(const char *dir, const char *opt, const char *want)
{
    char cmd[1400], p[600];
    snprintf(cmd, sizeof cmd, "python3 tools/neusight_rows.py --dir %s %s %s/bad.csv 2>&1", dir, opt,
             dir);
    FILE *f = popen(cmd, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char out[1024] = "";
    size_t got = fread(out, 1, sizeof out - 1, f);
    out[got] = '\0';
    CU_ASSERT_NOT_EQUAL(pclose(f), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    CU_ASSERT_EQUAL(tu_lines(out), 1);
    snprintf(p, sizeof p, "%s/bad.csv", dir);
    CU_ASSERT_EQUAL(access(p, F_OK), -1);
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (struct dirent *e; (e = readdir(d));)
        CU_ASSERT_PTR_NULL(strstr(e->d_name, ".neusight_rows."));
    closedir(d);
}

/* tools/neusight_rows.py turns NeuSight's raw files into rows validate
 * reads, each with the floor of its own GPU and op. */
static void neusight_rows_should_convert_every_class(void)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/neusight-mini", tu_tmpdir());
    mkdir(dir, 0755);
    char p[600];
    snprintf(p, sizeof p, "neusight-mini/kernels-gemm.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tu_write(
        p, "source,device_neusight,device_xpusim,op,B,M,N,K,latency_ms,kernel_name,grid_x,grid_y,"
           "grid_z,block_x,block_y,block_z,extra_kernels\n"
           "s,T4,t4,linear,1,58,13,141,0.05,volta_sgemm_32x128_tn,5,1,1,256,1,1,\n"
           "s,T4,t4,linear,1,512,8192,64,0.09,volta_sgemm_64x64_tn,5,1,1,256,1,1,splitKreduce_kernel\n"
           "s,T4,t4,bmm,4,64,32,16,0.03,volta_sgemm_32x32_nn,5,1,4,256,1,1,\n"));
    snprintf(p, sizeof p, "neusight-mini/kernels-rowwise.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tu_write(
        p, "source,device_neusight,device_xpusim,op,B,H,latency_ms,kernel_name,grid_x,grid_y,grid_z,"
           "block_x,block_y,block_z,in_neusight_trainset\n"
           "s,T4,t4,softmax,127,168,0.033,k,32,1,1,32,4,1,0\n"
           "s,T4,t4,ln,128,1024,0.046,k,32,1,1,32,4,1,0\n"));
    snprintf(p, sizeof p, "neusight-mini/kernels-elementwise.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tu_write(
        p, "source,device_neusight,device_xpusim,op,B,H,latency_ms,grid_x,grid_y,grid_z,block_x,"
           "block_y,block_z,in_neusight_trainset\n"
           "s,T4,t4,divu,127,168,0.0259,42,1,1,128,1,1,0\n"));
    size_t n;
    xs_vrow *rows = converted_rows(dir, "-o", &n);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(rows[i].ok);
    /* linear: C[M x K] = X[M x N] W^T, N the reduction; the floor is the op's smallest call */
    CU_ASSERT_STRING_EQUAL(xs_vrow_set_of(&rows[0]), "op=gemm;layout=row;m=58;n=141;k=13;ta=N;tb=T;"
                                                     "dtype=fp32;bias=1;tile=32x128;host_us=50");
    CU_ASSERT_STRING_EQUAL(rows[1].kclass, "gemm.split_k");
    CU_ASSERT_STRING_EQUAL(rows[2].kclass, "gemm.batched");
    CU_ASSERT_STRING_EQUAL(rows[3].kclass, "softmax");
    CU_ASSERT_STRING_EQUAL(rows[4].kclass, "layernorm");
    /* divu: PyTorch multiplies by the reciprocal */
    CU_ASSERT_STRING_EQUAL(rows[5].kclass, "pointwise.mul_scalar");
    xs_vrows_free(rows, n);
    /* a broken file is one line naming file, line and field */
    snprintf(p, sizeof p, "neusight-mini/kernels-elementwise.csv");
    tu_write(p, "source,device_neusight,device_xpusim,op,B,H,latency_ms\ns,T4,t4,add,0,4,0.1\n");
    conversion_should_refuse(dir, "-o", "kernels-elementwise.csv:2: B must be a positive integer");
}

/* --nodes: NeuSight's V100 training nodes (train-nodes-v100.csv) as kernel
 * rows of their own file: forward and backward where the per-node backward is
 * the step's, forward only for dropout, embedding and the residual add; the
 * floor is the run's median view_noop node. */
static void neusight_rows_should_convert_the_training_nodes(void)
{
    char dir[512], p[600];
    snprintf(dir, sizeof dir, "%s/neusight-nodes", tu_tmpdir());
    mkdir(dir, 0755);
    const char *head = "source,device_neusight,model,seq_len,batch,node_name,op_class,target,"
                       "input_shapes,output_shape,dtype,fw_ms,bw_ms,acc_ms,repeat\n";
    char csv[4096];
    snprintf(csv, sizeof csv,
             "%s"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,size,view_noop,size,\"[[2, 512]]\",\"(1,)\",,"
             "0.010,0,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,view,view_noop,view,\"[[2, 512]]\",\"(1,)\","
             "torch.float32,0.0124,0,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,eq,view_noop,eq,[[1]],\"(1,)\",,0.020,0,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,bert_embeddings_word_embeddings,embedding,e,"
             "\"[[2, 512]]\",x,torch.float32,0.039,0.25,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,add_2,add_residual,add,"
             "\"[[2, 512, 1024], [2, 512, 1024]]\",x,torch.float32,0.029,0.011,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,add_3,add_residual,add,"
             "\"[[2, 512, 1024], [1, 512, 1024]]\",x,torch.float32,0.030,0.011,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,ln,layernorm,l,\"[[2, 512, 1024]]\",x,torch.float32,"
             "0.044,0.058,0.01,24\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,softmax,softmax,s,\"[[2, 16, 512, 512]]\",x,"
             "torch.float32,0.098,0.26,0,24\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,drop,dropout,d,\"[[2, 16, 512, 512]]\",x,"
             "torch.float32,0.136,0.289,0,24\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,gelu,activation,<built-in function gelu>,"
             "\"[[2, 512, 4096]]\",x,torch.float32,0.054,0.075,0,24\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,tanh,activation,<built-in method tanh>,"
             "\"[[2, 1024]]\",x,torch.float32,0.030,0.028,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,fc,linear,f,\"[[2, 512, 1024]]\",x,torch.float32,"
             "0.5,1.0,0.1,24\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,sm16,softmax,s,\"[[2, 16, 512, 512]]\",x,"
             "torch.float16,0.05,0.13,0,24\n",
             head);
    snprintf(p, sizeof p, "neusight-nodes/train-nodes-v100.csv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tu_write(p, csv));
    size_t n;
    xs_vrow *rows = converted_rows(dir, "--nodes", &n);
    /* the broadcast add, the tanh, the linear and the fp16 node are left out */
    CU_ASSERT_EQUAL_FATAL(n, 9);
    const char *want[] = {"embedding", "pointwise.add", "layernorm", "layernorm.bwd", "softmax",
                          "softmax.bwd", "dropout", "gelu", "gelu.bwd"};
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(rows[i].ok);
        CU_ASSERT_STRING_EQUAL(rows[i].kclass, want[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_set_of(&rows[i]), ";host_us=12.4")); /* median 10, 12.4, 20 */
    }
    CU_ASSERT_STRING_EQUAL(xs_vrow_set_of(&rows[0]),
                           "op=embedding;vocab=30522;dim=1024;lookups=1024;dtype=fp32;host_us=12.4");
    CU_ASSERT_STRING_EQUAL(xs_vrow_set_of(&rows[5]),
                           "op=softmax;rows=16384;cols=512;dtype=fp32;dir=bwd;host_us=12.4");
    CU_ASSERT_STRING_EQUAL(xs_vrow_set_of(&rows[6]), "op=dropout;elems=8388608;dtype=fp32;dir=fwd;host_us=12.4");
    xs_vrows_free(rows, n);
    /* a broken shape list is one line naming file, line and field */
    snprintf(csv, sizeof csv,
             "%sr,Tesla_V100-PCIE-32GB,bert_large,512,2,size,view_noop,size,\"[[2, 512]]\",x,,0.010,0,0,1\n"
             "r,Tesla_V100-PCIE-32GB,bert_large,512,2,ln,layernorm,l,\"[[2, x]]\",x,torch.float32,"
             "0.044,0.058,0,24\n",
             head);
    snprintf(p, sizeof p, "neusight-nodes/train-nodes-v100.csv");
    tu_write(p, csv);
    conversion_should_refuse(dir, "--nodes", "train-nodes-v100.csv:3: input_shapes must be");
}

static void report_should_carry_the_runs_notes(void)
{
    const char *files[] = {"tests/data/measured/mixed.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    cJSON *extra = cJSON_CreateObject();
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(extra, "host_state"), "fma_gflops_core", 99);
    CU_ASSERT_EQUAL(xs_report_add_note(extra, "first, a comma"), XS_OK);
    CU_ASSERT_EQUAL(xs_report_add_note(extra, "second"), XS_OK);
    xs_strbuf sb = {0};
    xs_report_validate_extra(&sb, XS_FMT_TABLE, rows, n, extra);
    CU_ASSERT_FALSE(sb.failed);
    const char *tail = sb.data ? strstr(sb.data, "note: first, a comma\nnote: second\n") : NULL;
    CU_ASSERT_PTR_NOT_NULL(tail);
    CU_ASSERT(tail && tail[strlen("note: first, a comma\nnote: second\n")] == '\0');
    xs_sb_free(&sb);
    xs_report_validate_extra(&sb, XS_FMT_JSON, rows, n, extra);
    cJSON *doc = cJSON_ParseWithOpts(sb.data ? sb.data : "", NULL, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *notes = cJSON_GetObjectItem(doc, "notes");
    CU_ASSERT_EQUAL(cJSON_GetArraySize(notes), 2);
    CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(notes, 1)->valuestring, "second");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "host_state"),
                                        "fma_gflops_core")->valueint, 99);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(doc, "summary"));
    cJSON_Delete(doc);
    xs_sb_free(&sb);
    xs_report_validate_extra(&sb, XS_FMT_CSV, rows, n, extra);
    CU_ASSERT_PTR_NULL(sb.data ? strstr(sb.data, "note") : NULL);
    CU_ASSERT_PTR_NULL(sb.data ? strstr(sb.data, "host_state") : NULL);
    xs_sb_free(&sb);
    cJSON_Delete(extra);
    xs_vrows_free(rows, n);
}

static void measured_rows_should_be_predicted_or_carry_a_reason(void)
{
    const char *files[] = {"tests/data/measured/mixed.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 12);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT(rows[i].ok);
        CU_ASSERT(rows[i].predicted > 0);
        CU_ASSERT(rows[i].low <= rows[i].predicted && rows[i].predicted <= rows[i].high);
        CU_ASSERT_DOUBLE_EQUAL(fabs(rows[i].error_pct),
                               100 * fabs(rows[i].predicted - rows[i].measured) / rows[i].measured,
                               1e-9);
    }
    static const char *reasons[] = {
        "unknown device 'x100'",      "unknown key 'train.bach'", "'k' is required",
        "op must be one of gemm|optimizer|", "metric 'time_s' is for single kernels",
        "'value' must be a number > 0", "'metric' must be one of",
        "expected 6 fields, got 4",    "unterminated quote"};
    for (int i = 3; i < 12; i++) {
        CU_ASSERT_FALSE(rows[i].ok);
        if (!strstr(xs_vrow_reason(&rows[i]), reasons[i - 3]))
            fprintf(stderr, "\nline %d: '%s' lacks '%s'\n", rows[i].line, xs_vrow_reason(&rows[i]),
                    reasons[i - 3]);
        CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[i]), reasons[i - 3]));
        CU_ASSERT_EQUAL(rows[i].line, i + 2);
    }
    xs_vsummary s;
    xs_vsummarize(rows, n, NULL, NULL, &s);
    CU_ASSERT_EQUAL(s.n, 3);
    double sum = 0, mx = 0;
    for (int i = 0; i < 3; i++) {
        sum += fabs(rows[i].error_pct);
        mx = fmax(mx, fabs(rows[i].error_pct));
    }
    CU_ASSERT_DOUBLE_EQUAL(s.mape_pct, sum / 3, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(s.max_abs_pct, mx, 1e-12);
    xs_vrows_free(rows, n);
}

/* The column-major (BLAS) convention of a measured GEMM is the row-major
 * GEMM with m and n and the transposes swapped: the same prediction. */
static void gemm_layouts_should_describe_the_same_kernel(void)
{
    const char *csv =
        "device,scenario,set,metric,value,source\n"
        "a100-sxm4-80gb,-,op=gemm;m=4095;n=1024;k=512;ta=T;tb=N;dtype=fp16,time_s,1e-4,x\n"
        "a100-sxm4-80gb,-,op=gemm;m=1024;n=4095;k=512;ta=N;tb=T;dtype=fp16;layout=row,time_s,"
        "1e-4,x\n";
    const char *files[] = {tu_write("layouts.csv", csv)};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT(rows[0].ok && rows[1].ok);
    CU_ASSERT_DOUBLE_EQUAL(rows[0].predicted, rows[1].predicted, 1e-15);
    xs_vrows_free(rows, n);
}

/* rest_factor solves measured step time = predicted (share + (1 - share)
 * rest): a measurement equal to the prediction puts it at 1, a step 30%
 * longer than predicted puts the whole 30% on the non-matmul rest, and
 * kernel rows carry none. */
static void rest_factor_should_place_the_error_outside_the_matmuls(void)
{
    const char *csv = "device,scenario,set,metric,value,source\n"
                      "a100-sxm4-80gb,bert-base-squad,train.batch=32,step_time_s,1,x\n"
                      "a100-sxm4-80gb,-,op=gemm;m=4096;n=4096;k=4096;dtype=fp16,time_s,1e-3,x\n";
    const char *files[] = {tu_write("rest.csv", csv)};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_FATAL(rows[0].ok && rows[1].ok);
    double share = rows[0].matmul_share;
    CU_ASSERT(share > 0.2 && share < 0.9);
    CU_ASSERT(rows[0].has_rest);
    CU_ASSERT_FALSE(rows[1].has_rest);
    xs_vrow same = rows[0], slower = rows[0], rate = rows[0];
    same.measured = rows[0].predicted;
    slower.measured = 1.3 * rows[0].predicted;
    snprintf(rate.metric, sizeof rate.metric, "samples_per_s");
    rate.measured = 32 / slower.measured;
    xs_validate_row(&same);
    xs_validate_row(&slower);
    xs_validate_row(&rate);
    CU_ASSERT_DOUBLE_EQUAL(same.rest_factor, 1, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(slower.rest_factor, 1 + 0.3 / (1 - share), 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(rate.rest_factor, slower.rest_factor, 1e-9);
    xs_vrow faster = rows[0]; /* the matmuls alone take longer than this step */
    faster.measured = 0.5 * share * rows[0].predicted;
    xs_validate_row(&faster);
    CU_ASSERT(faster.has_rest && faster.rest_factor < 0);
    xs_vsummary s;
    xs_vsummarize(rows, n, NULL, NULL, &s);
    CU_ASSERT_EQUAL(s.n_rest, 1);
    CU_ASSERT_DOUBLE_EQUAL(s.rest_factor_median, rows[0].rest_factor, 1e-12);
    xs_vrows_free(rows, n);
}

static void bad_files_should_fail_as_a_whole(void)
{
    const char *files[] = {tu_write("nohdr.csv", "device,scenario,metric,value\n")};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL(xs_validate_files(files, 1, &rows, &n, &err), XS_EFIELD);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 1: the header must be "
                                           "device,scenario,set,metric,value,source"));
    const char *missing[] = {"tests/data/measured/none.csv"};
    CU_ASSERT_EQUAL(xs_validate_files(missing, 1, &rows, &n, &err), XS_EIO);
}

/* The audit's finding 3: a set longer than the reader's buffer was cut,
 * and "...;train.seq=384" predicted as train.seq=3 with exit 0. */
static void long_fields_should_be_refused_not_cut(void)
{
    char set[1400] = "", csv[4096];
    while (strlen(set) < 500)
        strcat(set, "train.grad_clip=true;");
    strcat(set, "train.seq=384");
    char *big = malloc(1200);
    memset(big, '1', 1199);
    big[1199] = '\0';
    snprintf(csv, sizeof csv,
             "device,scenario,set,metric,value,source\n"
             "a10,bert-base-squad,%s,samples_per_s,100,x\n"
             "a10,bert-base-squad,train.seq=384,samples_per_s,%s,x\n",
             set, big);
    free(big);
    const char *path = tu_write("long.csv", csv);
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(path, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_FALSE(rows[0].ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[0]), "field 'set' is longer than"));
    CU_ASSERT_FALSE(rows[1].ok);
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[1]), "field 'value' is longer than 1023"));
    xs_vrows_free(rows, n);
}

/* A quoted field holding a newline or an escape sequence cannot forge a
 * report line or reach the terminal: the field is refused (no id or key
 * holds a control character) and a reason quoting the row is one line. */
static void csv_text_should_never_be_printed_raw(void)
{
    const char *path = tu_write("forge.csv", "device,scenario,set,metric,value,source\n"
                                             "t4,bert-base-squad,\"train.batch=8\n"
                                             "FORGED LINE\",samples_per_s,10,x\n"
                                             "t4,bert-base-squad,train.batch=8,samples_per_s,"
                                             "\"1\033[31mred\",x\n"
                                             "\"t4\033]0;title\007\",bert-base-squad,,samples_per_s,1,x\n");
    static const char *const formats[] = {"", " --format csv", " --format json"};
    for (size_t f = 0; f < 3; f++) {
        char args[512];
        snprintf(args, sizeof args, "validate --measured '%s'%s", path, formats[f]);
        tu_result r = tu_run(args);
        CU_ASSERT_EQUAL(r.status, 1);
        CU_ASSERT_PTR_NULL(strchr(r.out, '\033'));
        CU_ASSERT_PTR_NULL(strchr(r.err, '\033'));
        CU_ASSERT_PTR_NULL(strchr(r.out, '\007'));
        CU_ASSERT_PTR_NULL(strstr(r.out, "\nFORGED"));
        tu_run_free(&r);
    }
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(path, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[0]), "field 'set' holds a control character"));
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[1]), "got \"1\\x1b[31mred\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(xs_vrow_reason(&rows[2]), "field 'device' holds a control character"));
    xs_vrows_free(rows, n);
}

/* One sign for every metric: a prediction faster than the measurement is
 * positive whether the row is a throughput or a time (the summaries
 * averaged opposite meanings), and the reports say so. */
/* A loaded row costs about what its text does: the record holds its ids,
 * the set and the reason are its own strings (a file of ~300-byte rows
 * took 6x its size in 1.9 KB records, more with the array's slack). */
static void measured_rows_should_take_memory_proportional_to_the_file(void)
{
    xs_error err;
    CU_ASSERT(sizeof(xs_vrow) <= 512);
    if (getenv("XS_TEST_UNDER_VALGRIND")) {
        fprintf(stderr, "\n(heap figure skipped: valgrind's allocator keeps no mallinfo2)\n");
        return;
    }
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "\n(heap figure skipped: ASan's allocator keeps no mallinfo2)\n");
    return;
#endif
    char *rows = NULL;
    CU_ASSERT_EQUAL_FATAL(xs_read_file("data/measured/dev-bert-finetune-lambda.csv", &rows, NULL,
                                       &err),
                          XS_OK);
    const char *body = strchr(rows, '\n') + 1;
    size_t n_body = strlen(body), bytes = 0;
    char path[600];
    snprintf(path, sizeof path, "%s/proportional.csv", tu_tmpdir());
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    bytes += (size_t)fprintf(f, "device,scenario,set,metric,value,source\n");
    while (bytes < 4000000) {
        fwrite(body, 1, n_body, f);
        bytes += n_body;
    }
    CU_ASSERT_EQUAL_FATAL(fclose(f), 0);
    free(rows);
    struct mallinfo2 before = mallinfo2();
    xs_vrow *v = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(xs_measured_load(path, &v, &n, &err), XS_OK);
    struct mallinfo2 after = mallinfo2();
    double held = (double)((after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd));
    CU_ASSERT(held < 2.5 * (double)bytes);
    if (!(held < 2.5 * (double)bytes))
        fprintf(stderr, "\n%zu rows of %zu bytes hold %.0f bytes (%.2f a byte)\n", n, bytes, held,
                held / (double)bytes);
    xs_vrows_free(v, n);
    remove(path);
}

static void the_error_sign_should_mean_one_thing(void)
{
    const char *path = tu_write("sign.csv", "device,scenario,set,metric,value,source\n"
                                            "t4,bert-base-squad,,samples_per_s,0.001,x\n"
                                            "t4,bert-base-squad,,step_time_s,100000,x\n"
                                            "t4,bert-base-squad,,samples_per_s,100000,x\n"
                                            "t4,bert-base-squad,,step_time_s,0.00001,x\n");
    const char *files[] = {path};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_FATAL(rows[i].ok);
    CU_ASSERT(rows[0].error_pct > 0 && rows[1].error_pct > 0); /* optimistic, both */
    CU_ASSERT(rows[2].error_pct < 0 && rows[3].error_pct < 0); /* pessimistic, both */
    CU_ASSERT_DOUBLE_EQUAL(rows[1].error_pct,
                           100 * (rows[1].measured - rows[1].predicted) / rows[1].measured, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(xs_verror_pct("time_s", 1, 2), 50, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(xs_verror_pct("tokens_per_s", 3, 2), 50, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(xs_verror_pct("memory_gb", 3, 2), -50, 1e-12);
    xs_vrows_free(rows, n);
    char args[600];
    snprintf(args, sizeof args, "validate --measured '%s' --format json", path);
    tu_result r = tu_run(args);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"error_sign\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"+ = optimistic: faster"));
    tu_run_free(&r);
    snprintf(args, sizeof args, "validate --measured '%s'", path);
    r = tu_run(args);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "summary (error: + = optimistic"));
    tu_run_free(&r);
    r = tu_run("validate --help");
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "+ = optimistic"));
    tu_run_free(&r);
}

static void validate_cli_should_report_and_exit_on_failed_rows(void)
{
    /* a file none of whose rows can be predicted has no error figures, not zeros */
    const char *cpu = tu_write("none.csv", "device,scenario,set,metric,value,source\n"
                                           "xeon-amx-2c,bert-base-squad,cluster.devices=2,"
                                           "samples_per_s,10,none\n");
    char none_cmd[600];
    snprintf(none_cmd, sizeof none_cmd, "validate --measured %s", cpu);
    tu_result none = tu_run(none_cmd);
    CU_ASSERT_EQUAL(none.status, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(none.out, "n   0   no row could be predicted"));
    CU_ASSERT_PTR_NULL(strstr(none.out, "MAPE   0.0%"));
    tu_run_free(&none);

    tu_result r = tu_run("validate --measured tests/data/measured/mixed.csv --format json");
    CU_ASSERT_EQUAL(r.status, 1); /* some rows could not be predicted */
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    cJSON *doc = cJSON_Parse(r.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    cJSON *sum = cJSON_GetObjectItem(doc, "summary");
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(sum, "n")->valuedouble, 3);
    CU_ASSERT_EQUAL((int)cJSON_GetObjectItem(sum, "failed")->valuedouble, 9);
    static const char *keys[] = {"mape_pct", "median_abs_pct", "max_abs_pct"};
    for (int i = 0; i < 3; i++)
        CU_ASSERT(cJSON_IsNumber(cJSON_GetObjectItem(sum, keys[i])));
    cJSON *row0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "rows"), 0);
    static const char *rkeys[] = {"device", "scenario", "set", "metric", "measured", "predicted",
                                  "error_pct"};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(row0, rkeys[i]));
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "by_device"),
                                               "h100-sxm5-80gb"));
    cJSON_Delete(doc);
    tu_run_free(&r);
    const char *ok = tu_write("ok.csv", "device,scenario,set,metric,value,source\n"
                                        "t4,-,op=gemm;m=512;n=512;k=512;dtype=fp16,time_s,"
                                        "3e-5,x\n");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "validate --measured '%s' --format csv", ok);
    r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.out), 2);
    /* a kernel row: no measured spread, no matmul share or rest factor, nor
     * trace columns; its class last */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, ",ok,,,,,,,gemm.large\n"));
    tu_run_free(&r);
    r = tu_run("validate");
    CU_ASSERT_EQUAL(r.status, 2);
    tu_run_free(&r);
}

/* Fields in each line of RFC 4180 text; -1 where a line's count differs
 * from the first line's (the header). */
static int csv_columns(const char *text)
{
    int want = -1, fields = 1, quoted = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            quoted = !quoted; /* a doubled quote toggles twice */
        else if (*p == ',' && !quoted)
            fields++;
        else if (*p == '\n' && !quoted) {
            if (want < 0)
                want = fields;
            else if (fields != want)
                return -1;
            fields = 1;
        }
    }
    return want;
}

static void validate_csv_should_quote_fields_holding_commas_and_quotes(void)
{
    xs_strbuf sb = {0};
    xs_sb_csv(&sb, "plain");
    xs_sb_csv(&sb, "|a, \"b\"|");
    CU_ASSERT_STRING_EQUAL(sb.data, "plain\"|a, \"\"b\"\"|\"");
    xs_sb_free(&sb);
    /* reasons with quotes and commas (mixed.csv), trace rows whose set
     * have their own columns, then the class, last */
    tu_result r = tu_run("validate --measured tests/data/measured/mixed.csv --format csv");
    CU_ASSERT_EQUAL(csv_columns(r.out), 19);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"field 'value' must be a number > 0, got \"\"-5\"\"\""));
    tu_run_free(&r);
    r = tu_run("validate --trace tests/data/traces/synthetic-a100-step.json -d a100-sxm4-80gb "
               "-s tests/data/scenarios/tiny.json --format csv");
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(csv_columns(r.out), 19);
    tu_run_free(&r);
}

static void validate_table_should_show_whole_sets_and_explain_rest(void)
{
    const char *csv = tu_write("long.csv",
                               "device,scenario,set,metric,value,source\n"
                               "a100-sxm4-80gb,bert-base-squad,train.batch=32;train.seq=384;"
                               "train.precision=amp_fp16;train.amp_mode=autocast;"
                               "train.optimizer=adamw;train.fused_optimizer=true;"
                               "train.grad_clip=false;train.loss_sync=true;data.loader_us=0;"
                               "cluster.devices=1,samples_per_s,400,x\n");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "validate --measured '%s'", csv);
    tu_result r = tu_run(cmd);
    CU_ASSERT_EQUAL(r.status, 0);
    /* every item whole, keys without their section, wrapped at '; ' */
    static const char *items[] = {"batch=32;", "seq=384;", "precision=amp_fp16;",
                                  "amp_mode=autocast;", "optimizer=adamw;",
                                  "fused_optimizer=true;", "grad_clip=false;", "loss_sync=true;",
                                  "loader_us=0;", "devices=1"};
    for (size_t i = 0; i < sizeof items / sizeof *items; i++)
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, items[i]));
    CU_ASSERT_PTR_NULL(strstr(r.out, "train.batch="));
    CU_ASSERT(tu_lines(r.out) > 6); /* a continuation line */
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "rest xF: if those matmul kernels took exactly their "
                                         "predicted time"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "set: keys without their section"));
    tu_run_free(&r);
    /* keys without a section as they are; no footer for what no row has */
    csv = tu_write("twice.csv", "device,scenario,set,metric,value,source\n"
                                "t4,-,op=gemm;m=512;n=512;k=512;dtype=fp16,time_s,3e-5,x\n");
    snprintf(cmd, sizeof cmd, "validate --measured '%s'", csv);
    r = tu_run(cmd);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "op=gemm; m=512; n=512; k=512; dtype=fp16"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "rest xF")); /* no scenario row, nothing to explain */
    CU_ASSERT_PTR_NULL(strstr(r.out, "set: keys without their section"));
    tu_run_free(&r);
}

/* The published development sets must stay fully predictable: every row
 * parsed and predicted (their accuracy is reported by `make validate`). */
static void dev_sets_should_be_predicted_row_by_row(void)
{
    const char *files[] = {"data/measured/dev-bert-finetune-lambda.csv",
                           "data/measured/dev-gemm-deepbench-v100.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 2, &rows, &n, &err), XS_OK);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        ok += rows[i].ok;
        if (!rows[i].ok)
            fprintf(stderr, "\n%s:%d: %s\n", rows[i].file, rows[i].line, xs_vrow_reason(&rows[i]));
    }
    CU_ASSERT_EQUAL(n, 64 + 320);
    CU_ASSERT_EQUAL(ok, n);
    xs_vrows_free(rows, n);
}

/* data/published/gemm.csv (issue 18): every row predicted, every source a
 * public address, and no row faster than its board's quoted peak for the
 * dtype (a row above the peak is a conversion slip: TFLOP/s to seconds, or
 * a batch left out of the FLOPs). */
static void published_gemm_set_should_be_predicted_and_below_peak(void)
{
    const char *files[] = {"data/published/gemm.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    CU_ASSERT_EQUAL(n, 78);
    size_t ok = 0, batched = 0;
    for (size_t i = 0; i < n; i++) {
        const xs_vrow *r = &rows[i];
        ok += r->ok;
        if (!r->ok)
            fprintf(stderr, "\n%s:%d: %s\n", r->file, r->line, xs_vrow_reason(r));
        long long m = 0, nn = 0, k = 0, b = 0; /* clang: set only when the asserts pass */
        char dt[16] = "";
        char rs[256];
        CU_ASSERT_FATAL(xs_kv_int(xs_vrow_set_of(r), "m", 1, 1 << 24, -1, &m, rs, sizeof rs) == 0 &&
                        xs_kv_int(xs_vrow_set_of(r), "n", 1, 1 << 24, -1, &nn, rs, sizeof rs) == 0 &&
                        xs_kv_int(xs_vrow_set_of(r), "k", 1, 1 << 24, -1, &k, rs, sizeof rs) == 0 &&
                        xs_kv_int(xs_vrow_set_of(r), "batch", 1, 1 << 20, 1, &b, rs, sizeof rs) == 0);
        CU_ASSERT_FATAL(xs_kv_get(xs_vrow_set_of(r), "dtype", dt, sizeof dt));
        batched += b > 1;
        xs_device d;
        CU_ASSERT_EQUAL_FATAL(xs_dev_open(r->device, &d, &err), XS_OK);
        xs_dtype t = strcmp(dt, "fp32") == 0 ? XS_FP32 : strcmp(dt, "bf16") == 0 ? XS_BF16 : XS_FP16;
        double tflops = 2.0 * m * nn * k * b / r->measured / 1e12;
        if (!(tflops > 0 && tflops <= d.peak_tflops[t]))
            fprintf(stderr, "\n%s:%d: %.1f TFLOP/s, above the %s peak %g\n", r->file, r->line,
                    tflops, dt, d.peak_tflops[t]);
        CU_ASSERT(tflops > 0 && tflops <= d.peak_tflops[t]);
    }
    CU_ASSERT_EQUAL(ok, n);
    CU_ASSERT_EQUAL(batched, 8);
    xs_vrows_free(rows, n);
    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(files[0], &text, &len, &err), XS_OK);
    size_t lines = 0, cited = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (lines++ > 0) /* the header */
            cited += strstr(l, "github.com/") != NULL;
    CU_ASSERT_EQUAL(cited, 78);
    free(text);
}

/* The published single-kernel rows (data/published/kernels.csv) must all be
 * predicted, and each must say where its number comes from: a row without a
 * source cannot be checked by anyone, and a row the model cannot parse
 * silently drops out of the class summaries. */
static void published_kernel_rows_should_be_predicted_and_cited(void)
{
    const char *files[] = {"data/published/kernels.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    size_t ok = 0, copies = 0;
    for (size_t i = 0; i < n; i++) {
        ok += rows[i].ok;
        if (!rows[i].ok)
            fprintf(stderr, "\n%s:%d: %s\n", rows[i].file, rows[i].line, xs_vrow_reason(&rows[i]));
        copies += rows[i].ok && strcmp(rows[i].kclass, "copy") == 0;
    }
    CU_ASSERT(n >= 54); /* other issues may append rows; none may vanish */
    CU_ASSERT_EQUAL(ok, n);
    CU_ASSERT(copies >= 6); /* the H100 PCIe casts of pytorch pull 137053 */
    xs_vrows_free(rows, n);

    char *text = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(xs_read_file(files[0], &text, &len, &err), XS_OK);
    size_t lines = 0, cited = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char *end = strchr(line + 1, '\n');
        size_t l = end ? (size_t)(end - line - 1) : strlen(line + 1);
        char buf[4096];
        snprintf(buf, sizeof buf, "%.*s", (int)(l < sizeof buf - 1 ? l : sizeof buf - 1), line + 1);
        lines++;
        if (strstr(buf, "github.com/") || strstr(buf, "http"))
            cited++;
        else
            fprintf(stderr, "\nkernels.csv row %zu names no source: %.80s\n", lines, buf);
    }
    CU_ASSERT_EQUAL(lines, n);
    CU_ASSERT_EQUAL(cited, lines);
    free(text);
}

/* Issue 18 asks for each kernel class to be measured on at least two boards:
 * one board's numbers cannot tell a wrong bandwidth term from a wrong
 * per-board parameter. Counts the distinct boards the published rows of a
 * class cover, so a row set that shrinks to one board is noticed. */
static size_t boards_of_class(const xs_vrow *rows, size_t n, const char *kclass)
{
    const char *seen[16];
    size_t nseen = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].ok || strcmp(rows[i].kclass, kclass) != 0)
            continue;
        size_t j = 0;
        while (j < nseen && strcmp(seen[j], rows[i].device) != 0)
            j++;
        if (j == nseen && nseen < 16)
            seen[nseen++] = rows[i].device;
    }
    return nseen;
}

static void published_kernel_classes_should_cover_several_boards(void)
{
    const char *files[] = {"data/published/kernels.csv"};
    xs_vrow *rows;
    size_t n;
    xs_error err;
    CU_ASSERT_EQUAL_FATAL(xs_validate_files(files, 1, &rows, &n, &err), XS_OK);
    /* A100 SXM4 and H100 SXM5 (Liger-Kernel's nn.Embedding rows) */
    CU_ASSERT(boards_of_class(rows, n, "embedding") >= 2);
    /* A100 SXM4, A100 PCIe, H100 SXM5 */
    CU_ASSERT(boards_of_class(rows, n, "layernorm") >= 3);
    CU_ASSERT(boards_of_class(rows, n, "layernorm.fwdbwd") >= 2);
    CU_ASSERT(boards_of_class(rows, n, "cross_entropy") >= 3);
    /* one board each so far (issue 18 round 5): torch.nn.Softmax on the RTX
     * 3090 (Liger-Kernel), GELU, Dropout and torch.add on the A100 SXM4 40GB
     * (FlagPerf); every row must load and predict, or the class drops out */
    CU_ASSERT(boards_of_class(rows, n, "softmax") >= 1);
    CU_ASSERT(boards_of_class(rows, n, "gelu") >= 1);
    CU_ASSERT(boards_of_class(rows, n, "dropout") >= 1);
    CU_ASSERT(boards_of_class(rows, n, "add") >= 1);
    xs_vrows_free(rows, n);
}

/* Every file under shared (a folder of the shared sets) equals its copy
 * under copy; folders are walked (neusight/ holds the per-kernel sets).
 * Returns the files compared. */
static int compare_tree(const char *shared, const char *copy)
{
    DIR *d = opendir(shared);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s", shared, e->d_name);
        snprintf(b, sizeof b, "%s/%s", copy, e->d_name);
        struct stat st;
        if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *c = opendir(b);
            if (!c)
                fprintf(stderr, "\n%s is missing (a copy of %s): run `make measured-refresh`\n", b, a);
            CU_ASSERT_PTR_NOT_NULL(c);
            if (c) {
                closedir(c);
                files += compare_tree(a, b);
            }
            continue;
        }
        size_t la = 0, lb = 0;
        char *ta = NULL, *tb = NULL;
        xs_error err;
        xs_read_file(a, &ta, &la, &err);
        xs_read_file(b, &tb, &lb, &err);
        if (!tb || la != lb || memcmp(ta, tb, la) != 0)
            fprintf(stderr, "\n%s differs from %s: run `make measured-refresh`\n", b, a);
        CU_ASSERT_PTR_NOT_NULL(tb);
        CU_ASSERT(tb && la == lb && memcmp(ta, tb, la) == 0);
        free(ta);
        free(tb);
        files++;
    }
    closedir(d);
    return files;
}

/* data/measured is a copy of the team's shared development sets (so a
 * clone can validate); a stale copy must be noticed, not silently used. */
static void measured_copy_should_equal_the_shared_sets(void)
{
    const char *shared = "../shared/reference/measured";
    DIR *d = opendir(shared);
    if (!d) {
        fprintf(stderr, "\n(skipped: %s is not beside this clone; nothing to compare the copy with)\n",
                shared);
        return;
    }
    closedir(d);
    CU_ASSERT(compare_tree(shared, "data/measured") > 0);
}

int tu_add_validate_suite(void)
{
    CU_pSuite s = CU_add_suite("validate", NULL, NULL);
    return !s ||
           !CU_add_test(s, "measured_rows_should_be_predicted_or_carry_a_reason",
                        measured_rows_should_be_predicted_or_carry_a_reason) ||
           !CU_add_test(s, "gemm_layouts_should_describe_the_same_kernel",
                        gemm_layouts_should_describe_the_same_kernel) ||
           !CU_add_test(s, "bad_files_should_fail_as_a_whole", bad_files_should_fail_as_a_whole) ||
           !CU_add_test(s, "rest_factor_should_place_the_error_outside_the_matmuls",
                        rest_factor_should_place_the_error_outside_the_matmuls) ||
           !CU_add_test(s, "dev_sets_should_be_predicted_row_by_row",
                        dev_sets_should_be_predicted_row_by_row) ||
           !CU_add_test(s, "published_kernel_rows_should_be_predicted_and_cited",
                        published_kernel_rows_should_be_predicted_and_cited) ||
           !CU_add_test(s, "published_gemm_set_should_be_predicted_and_below_peak",
                        published_gemm_set_should_be_predicted_and_below_peak) ||
           !CU_add_test(s, "published_kernel_classes_should_cover_several_boards",
                        published_kernel_classes_should_cover_several_boards) ||
           !CU_add_test(s, "measured_copy_should_equal_the_shared_sets",
                        measured_copy_should_equal_the_shared_sets) ||
           !CU_add_test(s, "long_fields_should_be_refused_not_cut", long_fields_should_be_refused_not_cut) ||
           !CU_add_test(s, "csv_text_should_never_be_printed_raw", csv_text_should_never_be_printed_raw) ||
           !CU_add_test(s, "the_error_sign_should_mean_one_thing", the_error_sign_should_mean_one_thing) ||
           !CU_add_test(s, "measured_rows_should_take_memory_proportional_to_the_file",
                        measured_rows_should_take_memory_proportional_to_the_file) ||
           !CU_add_test(s, "validate_cli_should_report_and_exit_on_failed_rows",
                        validate_cli_should_report_and_exit_on_failed_rows) ||
           !CU_add_test(s, "validate_csv_should_quote_fields_holding_commas_and_quotes",
                        validate_csv_should_quote_fields_holding_commas_and_quotes) ||
           !CU_add_test(s, "validate_table_should_show_whole_sets_and_explain_rest",
                        validate_table_should_show_whole_sets_and_explain_rest) ||
           !CU_add_test(s, "kernel_rows_should_be_summarised_by_class_and_device",
                        kernel_rows_should_be_summarised_by_class_and_device) ||
           !CU_add_test(s, "neusight_rows_should_convert_every_class",
                        neusight_rows_should_convert_every_class) ||
           !CU_add_test(s, "neusight_rows_should_convert_the_training_nodes",
                        neusight_rows_should_convert_the_training_nodes) ||
           !CU_add_test(s, "report_should_carry_the_runs_notes",
                        report_should_carry_the_runs_notes);
}
