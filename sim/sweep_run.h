/*
 * sweep_run: runs a sweep's points on this host (`bucketsim sweep -j N`; sim/sweep_run.c).
 */
#ifndef BS_SWEEP_RUN_H
#define BS_SWEEP_RUN_H

#include <stddef.h>

#include "sim/sweep_points.h"

/* Runs the unfinished points of PTS[NP] with JOBS workers, each `SELF run ... -o
 * DIR/points/NNNN`, its standard error kept in DIR/points/NNNN.err only when it wrote to it.
 * Returns 128 + the signal's number when a signal stopped the sweep, else the first failing
 * point's exit status, or -1 when every point ran without failing. */
int sweep_run_points(const char *self, const char *dir, const struct point *pts, size_t np,
		     long jobs);

#endif
