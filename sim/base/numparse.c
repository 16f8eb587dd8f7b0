/* numparse.c — see numparse.h. */
#include "numparse.h"

#include <math.h>
#include <stdlib.h>

static int digits(const char **p)
{
    int n = 0;
    while (**p >= '0' && **p <= '9') {
        (*p)++;
        n++;
    }
    return n;
}

int xs_parse_double(const char *text, double *out)
{
    const char *p = text;
    if (*p == '+' || *p == '-')
        p++;
    int whole = digits(&p), frac = 0;
    if (*p == '.') {
        p++;
        frac = digits(&p);
    }
    if (whole + frac == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!digits(&p))
            return -1;
    }
    if (*p != '\0')
        return -1;
    double v = strtod(text, NULL);
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}
