/*
 * cpu_hint: where a helper thread runs (the row writer, analysis/report.h).
 *
 * A helper started or woken by a busy thread is placed by the scheduler on that thread's CPU
 * whenever the other CPUs are busy too (wake-affine placement; `perf sched timehist` shows the
 * two taking turns on one CPU while a CPU-bound process holds the other), where it delays the
 * thread it should overlap.  cpu_hint_keep_off keeps it on the other CPUs while the starting
 * thread works; cpu_hint_release lets it run anywhere again once that thread is about to wait
 * for it (so that the CPU it leaves idle can take it).  Hints only: nothing computed depends on
 * them.  (The trace reader's second part, kept off the same way, read slower: it ran beside the
 * other process, at half speed, while the first part's thread waited for it.)
 */
#ifndef BS_CPU_HINT_H
#define BS_CPU_HINT_H

#include <pthread.h>
#include <stdbool.h>

/* Keeps TH off the calling thread's CPU; false (nothing done) when no other CPU is allowed or
 * the CPU is unknown. */
bool cpu_hint_keep_off(pthread_t th);
/* Lets TH run on every CPU the calling thread may use (after cpu_hint_keep_off returned true;
 * TH may have ended, not yet joined). */
void cpu_hint_release(pthread_t th);

#endif
