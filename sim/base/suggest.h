/* suggest.h — "did you mean": the known name nearest to a mistyped one, by
 * edit distance, so an unknown device id or --set key is answered with the
 * likely intended name rather than only a list. */
#ifndef XS_SUGGEST_H
#define XS_SUGGEST_H

#include <stddef.h>

/* Levenshtein distance between a and b, letters compared without case. */
size_t xs_edit_distance(const char *a, const char *b);

/* The candidate nearest to word, or NULL when none is near enough to be a
 * typo (at most a third of word's letters changed, at least 2 allowed), or
 * when word is the last dotted part of exactly one candidate ("batch" for
 * "train.batch"). Ties go to the first candidate. */
const char *xs_suggest(const char *word, const char *const *candidates, size_t n);

#endif
