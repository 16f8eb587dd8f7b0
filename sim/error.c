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
        err->code = code;
    }
    return code;
}
