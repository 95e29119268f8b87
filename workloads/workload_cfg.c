/*
 * workload_cfg: config keys of the workload (workload.*).  Their meaning in full is in
 * README.md, "Workloads"; workload.c is the only reader.
 */
#include "sim/config.h"
#include "sim/sim_cfg.h"

const struct cfg_def workload_cfg_defs[] = {
	{"workload.arrival", CFG_CHOICE, "auto", 0, 0, "auto|trace|poisson|gamma|offline", "",
	 "arrival process; auto = the trace's timestamps when it has them (and no mix), else "
	 "poisson; offline = every request at time 0"},
	{"workload.rate", CFG_DOUBLE, "1", 1e-9, 1e9, NULL, "requests/s",
	 "mean arrival rate of poisson and gamma arrivals"},
	{"workload.cv", CFG_DOUBLE, "2", 1e-3, 1e3, NULL, "",
	 "coefficient of variation of gamma inter-arrival times (1 = poisson, > 1 bursty)"},
	{"workload.time_scale", CFG_DOUBLE, NULL, 1e-9, 1e9, NULL, "",
	 "multiply the trace's timestamps by this (2 = half the rate); auto = 1"},
	{"workload.target_rate", CFG_DOUBLE, NULL, 1e-9, 1e9, NULL, "requests/s",
	 "scale the trace's timestamps so the mean arrival rate is this; auto = as recorded"},
	{"workload.num_requests", CFG_INT, NULL, 1, 100000000, NULL, "requests",
	 "requests to generate; auto = the trace's rows (sum over a mix; 1000 without a trace); "
	 "more than the rows cycles the trace (lengths=trace) or resamples it (empirical)"},
	{"workload.lengths", CFG_CHOICE, "auto", 0, 0,
	 "auto|trace|empirical|lognormal|uniform|constant|random", "",
	 "length source; trace = rows in file order, empirical = rows drawn at random with "
	 "replacement; random = vllm bench serve's random dataset (workload.random_*); auto = "
	 "trace, or empirical for a mix, or lognormal without a trace"},
	{"workload.prompt_mean", CFG_DOUBLE, "62", 1, 1e8, NULL, "tokens",
	 "mean prompt length of lognormal lengths; the value of constant lengths"},
	{"workload.prompt_cv", CFG_DOUBLE, "0.5", 0, 100, NULL, "",
	 "coefficient of variation of lognormal prompt lengths"},
	{"workload.prompt_min", CFG_INT, "1", 1, 1 << 30, NULL, "tokens",
	 "smallest prompt length of uniform lengths"},
	{"workload.prompt_max", CFG_INT, "1024", 1, 1 << 30, NULL, "tokens",
	 "largest prompt length of uniform lengths"},
	{"workload.output_mean", CFG_DOUBLE, "61", 1, 1e8, NULL, "tokens",
	 "mean output length of lognormal lengths; the value of constant lengths"},
	{"workload.output_cv", CFG_DOUBLE, "1", 0, 100, NULL, "",
	 "coefficient of variation of lognormal output lengths"},
	{"workload.output_min", CFG_INT, "1", 1, 1 << 30, NULL, "tokens",
	 "smallest output length of uniform lengths"},
	{"workload.output_max", CFG_INT, "512", 1, 1 << 30, NULL, "tokens",
	 "largest output length of uniform lengths"},
	{"workload.output_trace", CFG_STRING, NULL, 0, 0, NULL, CFG_UNIT_NAME_OR_FILE,
	 "a trace (name or path) whose output lengths are resampled for every request instead "
	 "(e.g. alpaca-outputs); auto = none"},
	{"workload.mix", CFG_STRING, NULL, 0, 0, NULL, CFG_UNIT_FILE_LIST,
	 "mix of traces NAME:WEIGHT[:online|offline],... (e.g. alpaca:0.8,longbench:0.2); each "
	 "request picks a trace with these weights; auto = none"},
	{"workload.truncate", CFG_BOOL, "false", 0, 0, NULL, "",
	 "cut prompts that do not fit server.max_model_len (prompt = max_model_len - output) "
	 "instead of rejecting the trace"},
	{"workload.eval_cap", CFG_BOOL, "false", 0, 0, NULL, "",
	 "cap each output at the trace's max_new_tokens column (LongBench's per-task cap)"},
	{"workload.sort_arrivals", CFG_BOOL, "false", 0, 0, NULL, "",
	 "sort a trace whose timestamps go backwards (stable) instead of rejecting it"},
	{"workload.priority", CFG_CHOICE, "auto", 0, 0, "auto|random|task", "",
	 "priority rule; auto = the trace's priority column, else 0; random = level i with "
	 "weight i of workload.priority_weights; task = online 0, offline 1"},
	{"workload.priority_weights", CFG_STRING, "1", 0, 0, NULL, "",
	 "weights of priority levels 0,1,... for priority=random (e.g. 0.2,0.8)"},
	{"workload.task", CFG_CHOICE, "auto", 0, 0, "auto|online|offline|random", "",
	 "online/offline rule; auto = the mix entry's task, else the trace's task column, else "
	 "online; random = offline with probability workload.offline_fraction"},
	{"workload.offline_fraction", CFG_DOUBLE, "0.5", 0, 1, NULL, "fraction",
	 "probability that a request is offline, for task=random"},
	/* The closed-loop client and the random dataset of vllm bench serve
	 * (workloads/random_dataset.c, sim/kernel_client.c). */
	{"workload.concurrency", CFG_INT, NULL, 1, 1000000000, NULL, "requests",
	 "closed-loop client (vllm bench serve --max-concurrency): at most this many requests in "
	 "flight, the next sent when one finishes (and not before its arrival time); auto = open "
	 "loop"},
	{"workload.random_input_len", CFG_INT, "1024", 1, 1 << 30, NULL, "tokens",
	 "lengths=random: --random-input-len, prompt tokens after the shared prefix"},
	{"workload.random_output_len", CFG_INT, "128", 1, 1 << 30, NULL, "tokens",
	 "lengths=random: --random-output-len, output tokens (generated exactly: --ignore-eos)"},
	{"workload.random_range_ratio", CFG_DOUBLE, "0", 0, 1, NULL, "",
	 "lengths=random: --random-range-ratio r < 1, lengths uniform on [floor(L(1-r)), "
	 "ceil(L(1+r))]"},
	{"workload.random_prefix_len", CFG_INT, "0", 0, 1 << 30, NULL, "tokens",
	 "lengths=random: --random-prefix-len, a prefix shared by every request (one prefix "
	 "group)"},
	{NULL, 0, NULL, 0, 0, NULL, NULL, NULL},
};
