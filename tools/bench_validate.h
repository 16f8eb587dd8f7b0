/* bench_validate.h — `make bench`: the memory validate's measured CSV
 * takes, in bytes per byte of the file (issue 40: it must stay
 * proportional to the file, and small). */
#ifndef XS_BENCH_VALIDATE_H
#define XS_BENCH_VALIDATE_H

#include <stddef.h>

typedef struct {
    size_t file_bytes, rows;
    double held;  /* heap the loaded rows hold, per CSV byte (mallinfo2) */
    double peak;  /* the load's peak resident memory over the process's
                     before it, per CSV byte (VmHWM; < 0: unknown) */
} xs_bench_vmem;

/* Write a measured CSV of about mb MB made of the rows of the shipped
 * files in data (repeated; short: one 16-byte row instead) under dir,
 * load it, and measure. 0, or -1 with a line on stderr. */
int xs_bench_validate_memory(const char *dir, double mb, int short_rows, xs_bench_vmem *out);

#endif
