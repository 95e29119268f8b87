/*
 * presets: named sets of configuration keys for the systems the simulator expresses as
 * policies (vllm, distserve, uellm, bucketserve, ...), applied with `--preset NAME`.
 *
 * Precedence: defaults < preset < config file < command line, whatever the order of the
 * options.
 */
#ifndef BS_PRESETS_H
#define BS_PRESETS_H

#include <stdio.h>

#include "sim/config.h"

int preset_apply(struct config *c, const char *name, struct bs_err *err);
void preset_list_print(FILE *out);

#endif
