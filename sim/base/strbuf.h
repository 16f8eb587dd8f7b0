/* strbuf.h — a growable string for building reports before they are
 * written (atomically) to a file or printed. */
#ifndef XS_STRBUF_H
#define XS_STRBUF_H

#include <stddef.h>

typedef struct {
    char *data; /* NUL-terminated; owned, free with xs_sb_free */
    size_t len, cap;
    int failed; /* an allocation failed; the content is truncated */
} xs_strbuf;

void xs_sb_printf(xs_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n bytes of s (no NUL among them), as they are */
void xs_sb_put(xs_strbuf *sb, const char *s, size_t n);
/* v as "%.<prec>g" writes it (xs_fmt_g: without printf, for the rows of
 * large grids) */
void xs_sb_g(xs_strbuf *sb, double v, int prec);
/* s as one CSV field (RFC 4180): quoted, with quotes doubled, when it holds
 * a comma, a quote or a line break, so that a spreadsheet keeps the columns. */
void xs_sb_csv(xs_strbuf *sb, const char *s);
void xs_sb_free(xs_strbuf *sb);

#endif
