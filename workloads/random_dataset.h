/*
 * random_dataset: the lengths of vllm bench serve's `random` dataset (workload.lengths =
 * random, keys workload.random_*).  Internal to workloads/.
 */
#ifndef BS_RANDOM_DATASET_H
#define BS_RANDOM_DATASET_H

#include <stdint.h>

#include "sim/config.h"
#include "sim/util.h"

/* The inclusive range of sampled lengths for SIDE ("prompt": the part after the shared prefix;
 * "output"), into *LO and *HI.  Fails (BS_EXIT_INPUT, naming the key) on a range ratio >= 1 or
 * a prompt range that can reach 0 tokens with no prefix, as vLLM refuses them. */
int random_dataset_range(const struct config *cfg, const char *side, int64_t *lo, int64_t *hi,
			 struct bs_err *err);

#endif
