/*
 * loop_async: two-stage loop: up to pp microbatches in flight, the returned one processed first.
 */
#include "policies/loop.h"

const struct loop_policy loop_async = {
	{"async", "two-stage loop: up to pp microbatches in flight, the returned one processed first", NULL},
	false, false,
};
