/* strbuf.c — see strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

/* Room for need more bytes and the NUL; 0 where it cannot be had. */
static int reserve(xs_strbuf *sb, size_t need)
{
    if (sb->failed)
        return 0;
    if (sb->data && sb->cap - sb->len > need)
        return 1;
    size_t cap = sb->cap ? sb->cap : 1024;
    while (cap < sb->len + need + 1)
        cap *= 2;
    char *grown = realloc(sb->data, cap);
    if (!grown) {
        sb->failed = 1;
        return 0;
    }
    if (!sb->data)
        grown[0] = '\0';
    sb->data = grown;
    sb->cap = cap;
    return 1;
}

void xs_sb_put(xs_strbuf *sb, const char *s, size_t n)
{
    if (!reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void xs_sb_g(xs_strbuf *sb, double v, int prec)
{
    if (reserve(sb, XS_FMT_G_MAX))
        sb->len += (size_t)xs_fmt_g(sb->data + sb->len, v, prec);
}

void xs_sb_printf(xs_strbuf *sb, const char *fmt, ...)
{
    if (sb->failed)
        return;
    for (;;) {
        size_t room = sb->cap - sb->len;
        va_list ap;
        va_start(ap, fmt);
        int n = sb->data ? vsnprintf(sb->data + sb->len, room, fmt, ap) : -2;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            sb->len += (size_t)n;
            return;
        }
        if (n == -1) {
            sb->failed = 1;
            return;
        }
        size_t need = sb->len + (n > 0 ? (size_t)n : 0) + 1;
        size_t cap = sb->cap ? sb->cap : 1024;
        while (cap < need)
            cap *= 2;
        char *grown = realloc(sb->data, cap);
        if (!grown) {
            sb->failed = 1;
            return;
        }
        if (!sb->data)
            grown[0] = '\0';
        sb->data = grown;
        sb->cap = cap;
    }
}

void xs_sb_csv(xs_strbuf *sb, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        xs_sb_put(sb, s, strlen(s));
        return;
    }
    xs_sb_printf(sb, "\"");
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1)
        xs_sb_printf(sb, "%.*s\"\"", (int)(q - s), s);
    xs_sb_printf(sb, "%s\"", s);
}

void xs_sb_free(xs_strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}
