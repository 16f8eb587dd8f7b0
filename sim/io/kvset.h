/* kvset.h — the "k=v;k=v" sets of a measured-run row (its `set` column):
 * a key's value, an integer or number in a range, and every key checked
 * against the ones a kind of row knows, each failure a reason naming the key. */
#ifndef XS_KVSET_H
#define XS_KVSET_H

#include <stddef.h>

/* The value of key in set, copied into dst; 0 when the key is absent. */
int xs_kv_get(const char *set, const char *key, char *dst, size_t size);

/* key as an integer in [lo, hi]; absent: dflt, or a reason when dflt < 0. */
int xs_kv_int(const char *set, const char *key, long long lo, long long hi, long long dflt,
              long long *out, char *reason, size_t size);

/* key as a number in (lo, hi]; absent: dflt, or a reason when dflt < 0. */
int xs_kv_num(const char *set, const char *key, double lo, double hi, double dflt, double *out,
              char *reason, size_t size);

/* key as one of choices "a|b|c" (its index); absent: dflt, or a reason when
 * dflt < 0. */
int xs_kv_choice(const char *set, const char *key, const char *choices, int dflt, int *out,
                 char *reason, size_t size);

/* Every key of set is one of allowed ("a|b|c"); else a reason naming it. */
int xs_kv_known(const char *set, const char *allowed, char *reason, size_t size);

#endif
