/* numparse.h — a number as a user writes one in a file or an option:
 * decimal digits with an optional sign, point and exponent ("256", "-1.5",
 * "2e-3"), nothing before or after it. strtod alone also takes hex floats
 * (0x1p8 is 256), inf, nan and leading blanks, each a slip rather than a
 * value a measured-run file or a price means. */
#ifndef XS_NUMPARSE_H
#define XS_NUMPARSE_H

/* 0 and *out when text is such a number and finite; -1 otherwise (*out
 * untouched). */
int xs_parse_double(const char *text, double *out);

#endif
