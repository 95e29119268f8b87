/*
 * sweep_csv: the merged CSV of a sweep directory, one row per point in point order, made by
 * one function whoever ran the points (`sweep -j`, --emit parallel or slurm, then --collect),
 * so every path gives the same bytes.  Config columns first (every key that varies, trace,
 * preset, seed, config_hash, error), then every summary metric (or --metrics).  See
 * sim/cmd_sweep.c for the directory layout.
 */
#ifndef BS_SWEEP_CSV_H
#define BS_SWEEP_CSV_H

#include <stdbool.h>

#include "sim/util.h"

/* Writes the merged CSV of sweep directory DIR (to DIR/sweep.csv, or stdout when TO_STDOUT;
 * MLIST: the metric columns, or NULL for all) and reports failed points in one line.
 * Returns the exit status (FAIL_CODE, or 1, when a point failed). */
int sweep_finish_csv(const char *dir, const char *mlist, bool to_stdout, int fail_code);
bool sweep_file_exists(const char *p);
/* Writes TEXT to PATH atomically. */
int sweep_write_atomic(const char *path, const char *text, struct bs_err *err);

#endif
