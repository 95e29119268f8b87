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
#include <stddef.h>

#include "sim/util.h"

/* Writes the merged CSV of sweep directory DIR (to DIR/sweep.csv, or stdout when TO_STDOUT;
 * MLIST: the metric columns, or NULL for all) and reports failed points in one line.  Before,
 * every input file of sweep.json is hashed again: a change since the sweep began is an error
 * (and a file gone, when RAN_HERE: the points ran on this host).  Returns the exit status
 * (FAIL_CODE, or 1, when a point failed). */
int sweep_finish_csv(const char *dir, const char *mlist, bool to_stdout, int fail_code,
		     bool ran_here);
/* How sweep_collect reads a point's file PATH (DIR/points/NAME/summary.json, DIR/points/NAME.err):
 * its text in *TEXT (freed by the caller; NULL when there is no such file), or -1 with ERR set. */
struct sweep_reader {
	int (*read)(void *ctx, const char *path, char **text, size_t *len, struct bs_err *err);
	void *ctx;
};
struct cJSON;
/* Checks a sweep directory's sweep.json (SPEC, read from SPEC_PATH) as input: a sweep
 * description of this version, every member --collect uses of the right type, the points named
 * in order (0001, 0002, ...; never a path).  0, or -1 with ERR (exit 3, file and member). */
int sweep_spec_check(const char *spec_path, const struct cJSON *spec, struct bs_err *err);
/* The merged CSV text of the sweep SPEC (checked first) whose points RD reads under DIR, with
 * the metrics of MLIST (comma-separated; NULL = every numeric one); counts the failed points
 * and describes the first in FIRST_FAIL.  Every summary.json is checked as input.  NULL on an
 * error (ERR set). */
char *sweep_collect(const char *dir, const char *spec_path, const struct cJSON *spec,
		    const char *mlist, const struct sweep_reader *rd, size_t *nfailed,
		    char **first_fail, struct bs_err *err);
/* The digits of the point names of a sweep of NP points (4, or more from 10000 points on), and
 * the name of the point at INDEX (0-based). */
size_t sweep_name_width(size_t np);
void sweep_point_name(size_t index, size_t np, char name[24]);
bool sweep_file_exists(const char *p);
/* Whether point NAME of sweep directory DIR is finished: its directory holds a complete output
 * set (its marker) with a summary.json. */
bool sweep_point_done(const char *dir, const char *name);
/* Writes TEXT to PATH atomically. */
int sweep_write_atomic(const char *path, const char *text, struct bs_err *err);

#endif
