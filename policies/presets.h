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
/* Prints every preset with the cards it uses at the default hardware.tp. */
void preset_list_print(FILE *out);

/* The cards a configuration uses: colocated, cluster.instances x cluster.pp x hardware.tp;
 * disaggregated, (cluster.prefill_instances + cluster.decode_instances) x hardware.tp. */
int64_t cluster_cards(const struct config *c);
/* cluster.cards = N fixes the total: derives cluster.instances (colocated) or the prefill /
 * decode split (disaggregated: a prefill or decode count given by the user is kept and the
 * other is the rest; neither given, prefill = floor(total / 2) and decode the rest), or fails
 * when N cannot be met (not a multiple of the cards per instance, fewer than two instances
 * when disaggregated, or instance counts the user set that disagree with N). */
int cluster_cards_resolve(struct config *c, struct bs_err *err);

#endif
