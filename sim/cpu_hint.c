/*
 * cpu_hint: see cpu_hint.h.
 */
#define _GNU_SOURCE /* sched_getcpu, pthread_setaffinity_np, the CPU_ macros */
#include "sim/cpu_hint.h"

#include <sched.h>

bool cpu_hint_keep_off(pthread_t th)
{
	cpu_set_t set;
	int me = sched_getcpu();
	if (me < 0 || sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(me, &set) ||
	    CPU_COUNT(&set) < 2)
		return false;
	CPU_CLR(me, &set);
	return pthread_setaffinity_np(th, sizeof set, &set) == 0;
}

void cpu_hint_release(pthread_t th)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		pthread_setaffinity_np(th, sizeof set, &set);
}
