/* error.c — fills xs_error; kept apart so a debugger can break on every error. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int xs_error_set(xs_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}
