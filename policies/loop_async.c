/*
 * loop_async: two-stage loop: up to pp microbatches in flight, the returned one processed first.
 */
#include "policies/loop.h"

static const struct cfg_def keys[] = {
	{"cluster.async_prefill_chunks", CFG_BOOL, "false", 0, 0, NULL, "",
	 "async loop: a request in its prefill may have chunks in several in-flight microbatches "
	 "(the RFC's last milestone; a decode request stays in one)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const struct loop_policy loop_async = {
	.info = {"async", "two-stage loop: up to pp microbatches in flight, the returned one processed first", keys},
	.virtual_engines = false,
	.waits_for_oldest = false,
};
