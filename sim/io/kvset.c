/* kvset.c — see kvset.h. */
#include "kvset.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "schema.h"

int xs_kv_get(const char *set, const char *key, char *dst, size_t size)
{
    size_t kl = strlen(key);
    for (const char *s = set; *s;) {
        const char *semi = strchr(s, ';');
        size_t len = semi ? (size_t)(semi - s) : strlen(s);
        if (len > kl && strncmp(s, key, kl) == 0 && s[kl] == '=') {
            snprintf(dst, size, "%.*s", (int)(len - kl - 1), s + kl + 1);
            return 1;
        }
        s = semi ? semi + 1 : s + len;
    }
    return 0;
}

/* The value of key into v (1), or 0 when it is absent and may be (the
 * caller's default applies), or -1 with the reason when it is required
 * (no default); `choices`, when given, is named in that reason. */
static int kv_value(const char *set, const char *key, int required, const char *choices, char *v,
                    size_t vsize, char *reason, size_t size)
{
    if (xs_kv_get(set, key, v, vsize))
        return 1;
    if (!required)
        return 0;
    if (choices)
        snprintf(reason, size, "set: '%s' is required (one of %s)", key, choices);
    else
        snprintf(reason, size, "set: '%s' is required", key);
    return -1;
}

int xs_kv_int(const char *set, const char *key, long long lo, long long hi, long long dflt,
              long long *out, char *reason, size_t size)
{
    char v[64];
    int got = kv_value(set, key, dflt < 0, NULL, v, sizeof v, reason, size);
    if (got <= 0) {
        if (got == 0)
            *out = dflt;
        return got;
    }
    char *end;
    long long x = strtoll(v, &end, 10);
    if (!v[0] || *end || x < lo || x > hi) {
        snprintf(reason, size, "set: '%s' must be an integer in [%lld, %lld], got \"%s\"", key,
                 lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

int xs_kv_num(const char *set, const char *key, double lo, double hi, double dflt, double *out,
              char *reason, size_t size)
{
    char v[64];
    int got = kv_value(set, key, dflt < 0, NULL, v, sizeof v, reason, size);
    if (got <= 0) {
        if (got == 0)
            *out = dflt;
        return got;
    }
    double x = 0;
    if (xs_parse_double(v, &x) || !(x > lo) || x > hi) {
        snprintf(reason, size, "set: '%s' must be a number in (%g, %g], got \"%s\"", key, lo, hi,
                 v);
        return -1;
    }
    *out = x;
    return 0;
}

int xs_kv_choice(const char *set, const char *key, const char *choices, int dflt, int *out,
                 char *reason, size_t size)
{
    char v[64];
    int got = kv_value(set, key, dflt < 0, choices, v, sizeof v, reason, size);
    if (got <= 0) {
        if (got == 0)
            *out = dflt;
        return got;
    }
    int i = xs_choice_index(choices, v);
    if (i < 0) {
        snprintf(reason, size, "set: '%s' must be one of %s, got \"%s\"", key, choices, v);
        return -1;
    }
    *out = i;
    return 0;
}

int xs_kv_known(const char *set, const char *allowed, char *reason, size_t size)
{
    for (const char *s = set; *s;) {
        const char *semi = strchr(s, ';');
        size_t len = semi ? (size_t)(semi - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq ? eq - s : (ptrdiff_t)len), s);
        if (!eq || xs_choice_index(allowed, key) < 0) {
            snprintf(reason, size, "set: unknown key '%s' (known: %s)", key, allowed);
            return -1;
        }
        /* the readers take the first of a repeated key and copy values into
         * 64-byte buffers: a second value or a longer one would be dropped
         * without a word */
        size_t vlen = len - (size_t)(eq - s) - 1;
        if (vlen >= 64) {
            snprintf(reason, size, "set: the value of '%s' is %zu characters long; at most 63",
                     key, vlen);
            return -1;
        }
        if (semi) {
            char later[80];
            snprintf(later, sizeof later, ";%s=", key);
            if (strstr(semi, later)) {
                snprintf(reason, size, "set: key '%s' is given twice", key);
                return -1;
            }
        }
        s = semi ? semi + 1 : s + len;
    }
    return 0;
}
