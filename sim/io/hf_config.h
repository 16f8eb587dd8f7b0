/* hf_config.h — a scenario's model from a Hugging Face config.json
 * (model.hf_config): the file found beside the scenario, read once (a
 * sweep's points share it), and imported by the family that reads its
 * model_type (family.h). It is read as transformers reads it: a key
 * given twice takes its last value (Python's json does; the config a
 * training run builds is that one), a null is refused where transformers
 * would build a broken module from None, and an error names this file and
 * its own key (hidden_size), not the scenario and model.hidden. */
#ifndef XS_HF_CONFIG_H
#define XS_HF_CONFIG_H

#include <cjson/cJSON.h>

#include "error.h"
#include "scenario.h"

/* Import model.hf_config (relative to the scenario at scn_path) into
 * model. lend: a cache holding that file's document, which stands in for
 * the file (read only, so threads share it); fill: an empty cache keeps
 * the document read. */
int xs_hf_import(cJSON *model, const char *scn_path, const xs_hf_cache *lend,
                 xs_hf_cache *fill, xs_error *err);

#endif
