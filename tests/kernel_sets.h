/* kernel_sets.h — run a kernel test once per kernel set (cpu_features.h)
 * this CPU can run, best first, by capping the kernels with XS_CPU_ISA:
 *
 *     for (int s = tu_set_first(); s >= 0; s = tu_set_next(s)) { ... }
 *
 * Sets the CPU lacks are reported skipped, with the reason, once per test;
 * the loop leaves XS_CPU_ISA unset and the features detected afresh. */
#ifndef XS_TEST_KERNEL_SETS_H
#define XS_TEST_KERNEL_SETS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"

/* Cap the kernels at set s (-1: no cap); 1 when this CPU runs s. */
static inline int tu_set_use(int s)
{
    if (s < 0)
        unsetenv("XS_CPU_ISA");
    else
        setenv("XS_CPU_ISA", xs_cpu_isa_name((xs_cpu_isa)s), 1);
    xs_cpu_features_redetect();
    return s < 0 || xs_cpu_features_get()->isa_error[0] == '\0';
}

/* The next set below s this CPU runs, or -1 after the last, with the cap
 * removed. The sets it skips are reported once per test binary. */
static inline int tu_set_next(int s)
{
    static int reported;
    for (s--; s >= 0; s--) {
        if (tu_set_use(s))
            return s;
        if (!(reported & (1 << s)))
            fprintf(stderr, "\n(kernel set %s skipped: %s)\n", xs_cpu_isa_name((xs_cpu_isa)s),
                    xs_cpu_features_get()->isa_error);
        reported |= 1 << s;
    }
    tu_set_use(-1);
    return -1;
}

static inline int tu_set_first(void)
{
    return tu_set_next(XS_ISA_COUNT);
}

/* The names of the sets this CPU runs, for a test's summary line. */
static inline const char *tu_sets_run(void)
{
    static char text[128];
    text[0] = '\0';
    for (int s = tu_set_first(); s >= 0; s = tu_set_next(s))
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", text[0] ? " " : "",
                 xs_cpu_isa_name((xs_cpu_isa)s));
    return text;
}

#endif
