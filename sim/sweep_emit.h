/*
 * sweep_emit: `bucketsim sweep --emit parallel|slurm`, the points' commands written for GNU
 * parallel or a Slurm job array instead of run (sim/cmd_sweep.c runs them with -j), and the
 * estimate that packs points into array tasks (--task-seconds; sim/README.md).
 */
#ifndef BS_SWEEP_EMIT_H
#define BS_SWEEP_EMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/sweep_points.h"
#include "sim/util.h"

/* The default of --task-seconds: an array task's estimated run time. */
#define SWEEP_TASK_S_DEFAULT 600.0

/* Refuses a word that --emit would write with a control character in it (WHAT names the word):
 * 0, or an exit-2 error in ERR. */
int sweep_emit_word_check(const char *what, const char *w, struct bs_err *err);
/* Whether sbatch option OPT is one the emitted script sets itself (its array and log). */
bool sweep_sbatch_owned(const char *opt);
/* Writes the commands of the unfinished points of PTS[NP] into DIR/commands.txt, running EXE
 * into DIR/points/NNNN; HOW "parallel" prints them, "slurm" writes DIR/sweep.sbatch with the
 * SBATCH[NSBATCH] options and tasks of TASK_S seconds by the estimate, and prints its path.
 * 0, or -1 with ERR set. */
int sweep_emit(const char *how, const char *exe, const char *dir, const struct point *pts,
	       size_t np, const char *const *sbatch, size_t nsbatch, double task_s,
	       struct bs_err *err);

#endif
