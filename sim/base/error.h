/* error.h — the library's one error funnel: a status code plus a message a
 * user can act on ("devices/t4.json: field 'memory.bandwidth_gbs' must be a
 * number > 0, got -3"). Library code never exits; only the CLI (cli/) decides. */
#ifndef XS_ERROR_H
#define XS_ERROR_H

enum {
    XS_OK = 0,
    XS_EIO = -1,          /* a file could not be read or written */
    XS_EJSON = -2,        /* malformed JSON */
    XS_EFIELD = -3,       /* missing, unknown or mistyped field */
    XS_ERANGE = -4,       /* a value outside its allowed range, or overflow */
    XS_ENOMEM = -5,
    XS_EUNSUPPORTED = -6, /* valid input that no model handles yet */
    XS_EARG = -7,         /* bad command-line argument */
    XS_ENOHW = -8         /* the hardware or library a command needs is not on this host */
};

typedef struct {
    int code;
    char msg[1024];
    /* the problems found after msg's when a document is checked whole
     * (a scenario): one a line, each as self-contained as msg; "" when
     * none, so msg alone stays what a first-error check would say */
    char more[3072];
} xs_error;

#include <stddef.h>

/* Escape control characters of msg in place (newline as \n, others as
 * \xNN), so that a message echoing input stays one line. */
void xs_error_one_line(char *msg, size_t size);

/* Add next's message to err's further problems (err->more), or count it
 * in *dropped when there is no room left for it and a closing line. */
void xs_error_add(xs_error *err, const xs_error *next, int *dropped);

/* Close err->more after xs_error_add: a line saying how many problems
 * were left out (none: nothing). */
void xs_error_close(xs_error *err, const char *where, int dropped);

/* Fill err (may be NULL) with code and a printf-style message (and no
 * further problems); return code.
 * Every error in the library goes through here, so one breakpoint sees all. */
int xs_error_set(xs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
