/* family.c — the one table of model families, in XS_FAMILY_CHOICES order. */
#include "family.h"

#include <stdio.h>
#include <string.h>

static const xs_family *const FAMILIES[] = {&xs_family_classic, &xs_family_llama,
                                              &xs_family_distilbert, &xs_family_vit,
                                              &xs_family_t5};
#define NFAMILIES ((int)(sizeof FAMILIES / sizeof FAMILIES[0]))

const xs_family *xs_family_of(int id)
{
    return FAMILIES[id >= 0 && id < NFAMILIES ? id : 0];
}

const struct xs_lora_names *xs_family_lora(const xs_family *f, const xs_scenario *s)
{
    return f->lora_names ? f->lora_names : f->lora(s);
}

const xs_family *xs_family_named(const char *name)
{
    for (int i = 0; i < NFAMILIES; i++)
        if (strcmp(FAMILIES[i]->name, name) == 0)
            return FAMILIES[i];
    return NULL;
}

const xs_family *xs_family_for_type(const char *type)
{
    for (int i = 0; i < NFAMILIES; i++)
        for (const char *const *t = FAMILIES[i]->model_types; t && *t; t++)
            if (strcmp(*t, type) == 0)
                return FAMILIES[i];
    return NULL;
}

void xs_family_types(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NFAMILIES; i++)
        for (const char *const *t = FAMILIES[i]->model_types; t && *t; t++)
            used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
                                     used ? "|" : "", *t);
}
