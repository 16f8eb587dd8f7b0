/* suggest.c — nearest known name for a typo (suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t xs_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = malloc((lb + 1) * sizeof *row);
    if (!row)
        return la > lb ? la : lb;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            size_t best = diag + !same;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

/* 1 when word is the part of name after its last '.' */
static int is_leaf(const char *word, const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && strcasecmp(dot + 1, word) == 0;
}

const char *xs_suggest(const char *word, const char *const *candidates, size_t n)
{
    const char *leaf = NULL;
    size_t leaves = 0;
    for (size_t i = 0; i < n; i++)
        if (is_leaf(word, candidates[i]))
            leaf = candidates[i], leaves++;
    if (leaves == 1)
        return leaf;
    size_t len = strlen(word);
    size_t limit = len / 3 > 2 ? len / 3 : 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = xs_edit_distance(word, candidates[i]);
        if (d < best_d)
            best = candidates[i], best_d = d;
    }
    return best;
}
