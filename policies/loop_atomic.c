/*
 * loop_atomic: one microbatch submitted per returned one, built before the returned one is processed.
 */
#include "policies/loop.h"

static const struct cfg_def keys[] = {
	{"cluster.atomic_empty_microbatches", CFG_BOOL, "true", 0, 0, NULL, "",
	 "atomic loop: keep the executor queue full with empty microbatches; false: a slot left "
	 "empty when a microbatch returns is lost for the rest of the run (the RFC's failure "
	 "mode)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const struct loop_policy loop_atomic = {
	.info = {"atomic", "one microbatch submitted per returned one, built before the returned one is processed", keys},
	.virtual_engines = false,
	.waits_for_oldest = true,
};
