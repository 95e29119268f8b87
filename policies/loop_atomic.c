/*
 * loop_atomic: one microbatch submitted per returned one, built before the returned one is processed.
 */
#include "policies/loop.h"

const struct loop_policy loop_atomic = {
	{"atomic", "one microbatch submitted per returned one, built before the returned one is processed", NULL},
	false, true,
};
