/*
 * random_dataset: the lengths of vllm bench serve's `random` dataset, as
 * vllm/benchmarks/datasets.py builds them (RandomDataset.sample and
 * RandomDataset.get_sampling_params): with input length L_in, output length L_out and range
 * ratio r in [0, 1), each request's sampled input length is uniform on the integers
 * [floor(L_in (1 - r)), ceil(L_in (1 + r))] and its output length uniform on
 * [max(1, floor(L_out (1 - r))), max(1, ceil(L_out (1 + r)))], drawn independently; the
 * prompt is the shared prefix of --random-prefix-len tokens followed by the sampled input.
 * vLLM first removes the tokenizer's special tokens from L_in and the server's tokenizer adds
 * them back; the simulator counts lengths as the server sees them, with no special tokens (the
 * same lengths exactly when r = 0).  Outputs are generated to their length exactly, which is
 * what the benchmark's --ignore-eos asks for.
 */
#include "workloads/random_dataset.h"

#include <math.h>
#include <string.h>

int random_dataset_range(const struct config *cfg, const char *side, int64_t *lo, int64_t *hi,
			 struct bs_err *err)
{
	double r = config_double(cfg, "workload.random_range_ratio");
	if (!(r < 1))
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "workload.random_range_ratio",
			       "must be below 1 (vllm bench serve: range_ratio must be in [0, 1)), "
			       "got %.9g", r);
	bool prompt = !strcmp(side, "prompt");
	double len = (double)config_int(cfg, prompt ? "workload.random_input_len"
						    : "workload.random_output_len");
	*lo = (int64_t)floor(len * (1 - r));
	*hi = (int64_t)ceil(len * (1 + r));
	if (!prompt) {
		if (*lo < 1)
			*lo = 1;
		return 0;
	}
	if (*lo < 1 && config_int(cfg, "workload.random_prefix_len") < 1)
		return bs_errf(err, BS_EXIT_INPUT, cfg->file, 0, "workload.random_input_len",
			       "with workload.random_range_ratio=%.9g a prompt can have 0 tokens; "
			       "increase it or decrease the ratio", r);
	return 0;
}
