# split.awk — the held-out rule of issue 18, fixed on 2026-11-24 before any
# model change of that issue (see data/holdout/README.md). Reads one
# measured-run CSV; prints its header and the rows of the part asked for
# (-v part=kept or part=held). Row numbers count data rows from 1.
#   held out: every BERT-large row (scenario bert-large-squad);
#             every even data row of a single-kernel GEMM file (DeepBench);
#             every power-limit row at 125, 175 or 225 W.
# Everything else is kept. New evidence files (single kernels other than
# GEMM) are kept: they are found after the rule and are not the dev set.
BEGIN { FS = "," }
NR == 1 { print; next }
{
    row = NR - 1
    held = 0
    if ($2 == "bert-large-squad") held = 1
    if ($2 == "-" && $3 ~ /(^|;)op=gemm(;|$)/ && row % 2 == 0) held = 1
    if ($3 ~ /(^|;)device\.power_limit_w=(125|175|225)(;|$)/) held = 1
    if ((part == "held") == held) print
}
