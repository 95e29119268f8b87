/*
 * fuzz_trace_csv: the CSV trace reader (workloads/trace.c through libcsv), both with and
 * without sorting and outputs-only traces.
 */
#include "tests/fuzz/fuzz.h"
#include "workloads/trace_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int mode = 0; mode < 2; mode++) {
		struct trace t;
		struct bs_err err = {0};
		if (trace_load_buffer("fuzz.csv", (const char *)data, size, false, mode, mode, &t,
				      &err) == 0)
			trace_release(&t);
	}
	return 0;
}
