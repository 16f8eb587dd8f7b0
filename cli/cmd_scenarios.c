/* cmd_scenarios.c — `xpusim scenarios`: the shipped scenarios and what
 * each fine-tunes; --new writes a template for a scenario of one's own. */
#include "cli.h"
#include "infer.h"

#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "gate.h"
#include "paths.h"
#include "scenario.h"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: xpusim scenarios\n"
            "       xpusim scenarios --new NAME [-o PATH]\n\n"
            "Lists the scenario files in scenarios/ with their descriptions; with --new,\n"
            "writes a template for a new scenario instead.\n\n"
            "A minimal scenario is an \"id\" (the file name without .json), a \"model\" and\n"
            "\"data\": {\"samples\": N}, the training set's size:\n\n"
            "  {\"id\": \"my-run\",\n"
            "   \"model\": {\"hf_config\": \"my-model/config.json\", \"head\": \"cls\"},\n"
            "   \"data\": {\"samples\": 67349}}\n\n"
            "\"model\" names a Hugging Face config.json (\"hf_config\", a path relative to the\n"
            "scenario file; model_type bert, roberta, gpt2, llama, mistral or qwen2) plus\n"
            "the task head (\"head\": span|cls|lm), or gives the shape itself (arch,\n"
            "layers, hidden, heads, ffn, vocab, max_positions, ...). Every \"train\",\n"
            "\"data\" and \"cluster\" key but data.samples has a default: what the Hugging\n"
            "Face Trainer does on PyTorch 2.0-2.7 when given no flags:\n"
            "  train.batch 8, train.grad_accum 1, data.epochs 3: TrainingArguments'\n"
            "    per_device_train_batch_size, gradient_accumulation_steps, num_train_epochs\n"
            "  train.precision fp32: no --fp16/--bf16 (with one: train.amp_mode autocast)\n"
            "  train.optimizer adamw, fused_optimizer false, optimizer_impl foreach: optim\n"
            "    adamw_torch, torch.optim.AdamW, foreach on CUDA unless asked for fused\n"
            "  train.grad_clip true, grad_clip_impl torch: max_grad_norm 1.0, clipped with\n"
            "    torch.nn.utils.clip_grad_norm_\n"
            "  train.loss_sync true: logging_nan_inf_filter tests each loss on the host\n"
            "  train.zero_grad none: model.zero_grad() sets gradients to None (PyTorch 2)\n"
            "  train.attention flash: transformers >= 4.36 runs scaled_dot_product_attention\n"
            "  train.seq by model.head, capped at model.max_positions: lm 1024 (run_clm.py),\n"
            "    span 384 (run_qa.py), cls 128 (run_glue.py); vit: the patches + 1\n"
            "  train.kernels eager, ffn_bias gemm, fp32_optimizer same,\n"
            "    generic_loop_efficiency 0.78, loop_elems 4, data.loader_us 0,\n"
            "    cluster.devices 1\n"
            "Sources: huggingface/transformers@00349ae8 training_args.py, @000945a9\n"
            "trainer.py, @00d481d1 run_clm.py, @03ea97ae run_qa.py, @0055f834 run_glue.py;\n"
            "pytorch/pytorch@002d2f0b torch/optim/optimizer.py and #92731. Each key, what it\n"
            "accepts and its default: `xpusim predict --help`. The shipped scenarios write\n"
            "every key out (their recipes: NVIDIA's run_squad.py, the Trainer of 2022).\n\n"
            "A scenario's problems are reported together, one error line each (an unknown\n"
            "key, a missing or bad value), and nothing is predicted. Use a scenario by path\n"
            "(-s my-run.json) or put it in scenarios/ and use its id.\n\n"
            "--new NAME writes NAME.json in the current folder (or at -o PATH, a file\n"
            "named NAME.json or a folder): the minimal scenario above with bert-base-uncased's\n"
            "shape inline and every train, data and cluster key written out at its default,\n"
            "each section with a \"notes\" object saying what each key means (notes are not\n"
            "read). It never overwrites a file, and the template predicts as it is.\n\n"
            "Examples:\n"
            "  xpusim scenarios\n"
            "  xpusim scenarios --new my-run   # writes my-run.json\n"
            "  xpusim predict -s my-run.json -d l4\n"
            "  xpusim predict -s my-run.json --set model.hf_config=my-model/config.json\n");
}

/* Where --new NAME writes: -o PATH (a folder, or a file named NAME.json),
 * else NAME.json here. */
static int template_path(const char *name, const char *output, char *dst, size_t size)
{
    char msg[1536];
    struct stat st;
    if (output && stat(output, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(dst, size, "%s%s%s.json", output,
                 output[strlen(output) - 1] == '/' ? "" : "/", name);
        return 0;
    }
    if (!output) {
        snprintf(dst, size, "%s.json", name);
        return 0;
    }
    const char *base = strrchr(output, '/');
    base = base ? base + 1 : output;
    size_t nl = strlen(name);
    if (strncmp(base, name, nl) != 0 || strcmp(base + nl, ".json") != 0) {
        snprintf(msg, sizeof msg,
                 "scenarios --new %s: -o %s: the file must be named %s.json (a scenario's "
                 "\"id\" is its file name), or be a folder",
                 name, output, name);
        return cli_fail(EXIT_USAGE, msg);
    }
    snprintf(dst, size, "%s", output);
    return 0;
}

static int write_template(const char *name, const char *output)
{
    char id[128], path[4096], msg[4608];
    size_t len = strlen(name);
    /* "my-run.json" names the file; the id is its stem */
    snprintf(id, sizeof id, "%.*s", (int)(len > 5 && strcmp(name + len - 5, ".json") == 0
                                              ? len - 5
                                              : len),
             name);
    xs_error err;
    if (xs_scn_check_id(id, &err)) {
        snprintf(msg, sizeof msg, "scenarios --new: %s", err.msg);
        return cli_fail(EXIT_USAGE, msg);
    }
    int rc = template_path(id, output, path, sizeof path);
    if (rc)
        return rc;
    struct stat st;
    if (lstat(path, &st) == 0) {
        snprintf(msg, sizeof msg,
                 "scenarios --new %s: %s exists; --new does not overwrite a file (remove it, "
                 "or pick another name or -o)",
                 id, path);
        return cli_fail(EXIT_DATA, msg);
    }
    cJSON *doc = NULL;
    if (xs_scn_template(id, &doc, &err) || xs_write_json(path, doc, 1, "the template", &err)) {
        cJSON_Delete(doc);
        return cli_fail_err(&err);
    }
    cJSON_Delete(doc);
    printf("wrote %s: scenario \"%s\" with every default written out; edit it, then\n"
           "  xpusim predict -s %s\n",
           path, id, path);
    return 0;
}

int cli_scenarios(int argc, char **argv)
{
    /* --new NAME is this command's own: take it out, the shared parser does
     * the rest (and refuses what does not apply here) */
    const char *name = NULL;
    char *rest[256];
    int n = 0;
    for (int i = 0; i < argc && n < (int)(sizeof rest / sizeof *rest) - 1; i++) {
        if (i > 0 && strcmp(argv[i], "--new") == 0) {
            if (i + 1 >= argc)
                return cli_fail(EXIT_USAGE, "scenarios: option '--new' needs a value");
            name = argv[++i];
        } else if (i > 0 && strncmp(argv[i], "--new=", 6) == 0) {
            name = argv[i] + 6;
        } else {
            rest[n++] = argv[i];
        }
    }
    rest[n] = NULL;
    cli_options o;
    int rc;
    if (cli_begin(n, rest, &o, "ho", usage, &rc))
        return rc;
    if (name)
        return write_template(name, o.output);
    if (o.output)
        return cli_fail(EXIT_USAGE, "scenarios: -o goes with --new NAME (see --help)");
    xs_error err;
    char **ids;
    size_t count;
    if (xs_list_ids("scenarios", &ids, &count, &err))
        return cli_fail_err(&err);
    for (size_t i = 0; i < count && rc == 0; i++) {
        xs_scenario s;
        xs_inf_scenario inf;
        /* a file listed is one that loads and passes the gate (its relations) */
        if (xs_scn_open(ids[i], NULL, 0, &s, &err) == XS_OK && xs_wl_gate(&s, &err) == XS_OK)
            printf("%-24s %s\n", s.id, s.description);
        else if (err.code == XS_EUNSUPPORTED && xs_inf_open(ids[i], NULL, 0, &inf, &err) == XS_OK)
            printf("%-24s %s (inference: xpusim threads)\n", inf.id, inf.description);
        else
            rc = cli_fail_err(&err);
    }
    xs_ids_free(ids, count);
    return rc;
}
