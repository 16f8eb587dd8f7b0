/* family_shared.h — what the families' records share (family.h): the
 * checks of their gate slots (a model key that only one family reads must
 * be left at its default by the others, a class count needs a
 * classification head; each family asks them in the order its own checks
 * come, the first broken relation being the one reported), and the plain
 * model line of the table report. */
#ifndef XS_FAMILY_SHARED_H
#define XS_FAMILY_SHARED_H

#include "error.h"
#include "scenario.h"
#include "strbuf.h"

/* train.seq within model.max_positions: the learned position table's rows
 * (the families with one; T5's positions are relative buckets, ViT's
 * sequence is its patches) */
int xs_fam_seq_in_positions(const xs_scenario *s, const char *where, xs_error *err);
/* distilbert's model.head_dropout */
int xs_fam_no_head_dropout(const xs_scenario *s, const char *where, xs_error *err);
/* t5's encoder-decoder keys (arch, decoder layers, buckets, gated FFN, target length) */
int xs_fam_no_t5_keys(const xs_scenario *s, const char *where, xs_error *err);
/* vit's image keys */
int xs_fam_no_vit_keys(const xs_scenario *s, const char *where, xs_error *err);
/* model.labels other than 2 with a head that scores no classes */
int xs_fam_labels_need_cls(const xs_scenario *s, const char *where, xs_error *err);
/* llama's keys (key/value heads, untied head, biases, window, SiLU) */
int xs_fam_no_llama_keys(const xs_scenario *s, const char *where, xs_error *err);
/* The first llama-only key of m set, in the order vit's check names them,
 * or NULL. */
const char *xs_fam_llama_key(const xs_model *m);

/* The table report's model line of an encoder or decoder with a plain
 * layer: what (e.g. "encoder"), its shape, its head and params. */
void xs_fam_describe(xs_strbuf *sb, const xs_scenario *s, const char *what, double params);

#endif
