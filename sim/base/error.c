/* error.c — fills xs_error; kept apart so a debugger can break on every error. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void xs_error_one_line(char *msg, size_t size)
{
    char out[2048];
    size_t k = 0;
    for (const unsigned char *c = (const unsigned char *)msg; *c && k + 5 < sizeof out; c++) {
        if (*c == '\n')
            k += (size_t)snprintf(out + k, sizeof out - k, "\\n");
        else if (*c == '\r')
            k += (size_t)snprintf(out + k, sizeof out - k, "\\r");
        else if (*c < 0x20 || *c == 0x7f)
            k += (size_t)snprintf(out + k, sizeof out - k, "\\x%02x", *c);
        else
            out[k++] = (char)*c;
    }
    out[k] = '\0';
    snprintf(msg, size, "%s", out);
}

int xs_error_set(xs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* messages echo input (a key, a file name); a newline in it must not
         * turn the promised one error line into two */
        xs_error_one_line(err->msg, sizeof err->msg);
        err->more[0] = '\0';
        err->code = code;
    }
    return code;
}

/* room kept at the end of more for the closing "N more problems" line */
#define CLOSING_ROOM 160

void xs_error_add(xs_error *err, const xs_error *next, int *dropped)
{
    if (!err)
        return;
    size_t used = strlen(err->more), len = strlen(next->msg);
    if (used + 1 + len + CLOSING_ROOM >= sizeof err->more) {
        (*dropped)++;
        return;
    }
    snprintf(err->more + used, sizeof err->more - used, "%s%s", used ? "\n" : "", next->msg);
}

void xs_error_close(xs_error *err, const char *where, int dropped)
{
    if (!err || dropped <= 0)
        return;
    size_t used = strlen(err->more);
    snprintf(err->more + used, sizeof err->more - used, "%s%.100s: %d more problem%s not shown",
             used ? "\n" : "", where, dropped, dropped == 1 ? "" : "s");
}
