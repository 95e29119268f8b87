/*
 * fuzz_trace_vllm: `vllm bench serve --save-result --save-detailed` files read as traces
 * (workloads/trace_vllm.c, reached through the JSON trace reader, which recognises them by
 * their members), with and without sorting.
 */
#include "tests/fuzz/fuzz.h"
#include "workloads/trace_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int mode = 0; mode < 2; mode++) {
		struct trace t;
		struct bs_err err = {0};
		if (trace_load_buffer("fuzz.json", (const char *)data, size, true, mode, mode, &t,
				      &err) == 0)
			trace_release(&t);
	}
	return 0;
}
