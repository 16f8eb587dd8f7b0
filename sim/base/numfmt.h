/* numfmt.h — doubles as printf's "%.<prec>g" writes them, without stdio's
 * machinery: a sweep writes a dozen numbers a row for 100,000 rows a
 * second, and glibc's printf of a double (its exact multi-precision
 * digits) was a tenth of a row's time. */
#ifndef XS_NUMFMT_H
#define XS_NUMFMT_H

#include <stddef.h>

/* The longest text xs_fmt_g writes, its NUL included. */
#define XS_FMT_G_MAX 32

/* Write v into dst (XS_FMT_G_MAX bytes) as snprintf(dst, XS_FMT_G_MAX,
 * "%.*g", prec, v) does, byte for byte, for prec 1..17; return its
 * length. */
int xs_fmt_g(char *dst, double v, int prec);

#endif
