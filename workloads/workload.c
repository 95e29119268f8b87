/* workload: BOOTSTRAP placeholder, replaced by the workloads work. */
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

int workload_build(const struct config *cfg, const char *trace, uint64_t seed,
		   struct workload *out, struct bs_err *err)
{
	(void)cfg; (void)seed; (void)out;
	return bs_errf(err, BS_EXIT_INPUT, trace, 0, NULL, "workloads not built yet");
}

void workload_release(struct workload *w) { free(w->req); memset(w, 0, sizeof *w); }

uint64_t workload_stream_seed(uint64_t master, const char *stream)
{
	uint64_t h = 1469598103934665603ull ^ master;
	for (const char *p = stream; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

void workload_list_print(FILE *out) { (void)out; }
