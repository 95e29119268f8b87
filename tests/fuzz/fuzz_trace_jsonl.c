/*
 * fuzz_trace_jsonl: the JSON Lines (and JSON array) trace reader, Mooncake's hash_ids included.
 */
#include "tests/fuzz/fuzz.h"
#include "workloads/trace_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int mode = 0; mode < 2; mode++) {
		struct trace t;
		struct bs_err err = {0};
		if (trace_load_buffer("fuzz.jsonl", (const char *)data, size, true, mode, mode, &t,
				      &err) == 0)
			trace_release(&t);
	}
	return 0;
}
