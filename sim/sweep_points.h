/*
 * sweep_points: a sweep's specification (shared options, axes or listed points, seeds) and its
 * points, each a `bucketsim run` command line checked as run would check it.
 */
#ifndef BUCKETSIM_SWEEP_POINTS_H
#define BUCKETSIM_SWEEP_POINTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/util.h"

/* The option key of --trace in the shared option list. */
enum { SWEEP_OPT_TRACE = 't' };

struct saved_opt {
	int key;
	char *arg;
};

struct axis {
	char *key;
	char **vals;
	size_t n;
	const char *file;   /* the sweep file that gave it, or NULL (--axis) */
	long line;          /* its line there */
};

struct spec {
	struct saved_opt *so;   /* shared config options, in order */
	size_t nso;
	struct axis *ax;
	size_t nax;
	cJSON *listed;          /* the sweep file's "points", or NULL */
	cJSON *base;            /* the sweep file's base configuration, or NULL */
	const char *trace;      /* --trace */
	uint64_t seed0;
	int64_t seeds;
	char *metrics;          /* --metrics, or NULL */
	bool file_trace, file_seed, file_seeds; /* the sweep file gave "trace", "seed", "seeds" */
	const char *file;       /* the sweep file (-f), or NULL */
	bool count_requests;    /* sweep_point_prepare counts each point's requests (point.nreq):
				 * workload.num_requests, or when automatic the workload built */
	char *file_text;        /* its text, for the lines of its members */
	size_t file_len;
};

/* One point: its assignments (axis keys in order, values as text) and seed. */
struct point {
	char **key, **val;
	size_t n;
	uint64_t seed;
	char *trace, *preset;  /* effective, "" when none */
	char name[24];         /* "0001" */
	char *label;           /* "workload.rate=20 seed=2" for messages */
	char **argv;           /* the `bucketsim run` words after the program name */
	size_t argc;
	char **inputs;         /* the files its configuration reads (config_files), absolute */
	size_t ninputs;
	long listed;           /* the index of its listed point in the sweep file, or -1 */
	int64_t nreq;          /* its requests (spec.count_requests), or 0 when not counted */
};

/* An absolute path for a file argument (unchanged when it names no file). */
char *sweep_abs_path(const char *p);
void sweep_spec_release(struct spec *s);
/* --axis KEY=V1,V2,... or KEY=[JSON list]. */
int sweep_axis_arg(struct spec *s, const char *arg, struct bs_err *err);
/* A sweep file: base configuration plus "axes" or "points". */
int sweep_load_file(struct spec *s, const char *path, struct bs_err *err);
/* The line of member PATH of the sweep file ("axes.KEY", "points[2].KEY", "server.block_size"
 * for {"server": {"block_size": ...}} too), or 0. */
long sweep_file_line(const struct spec *s, const char *path);
/* A point's configuration error ERR (from sweep_point_prepare) about what the sweep file sets
 * named by the file and line there (exit 3): a key of its base (not the copy BASEFILE), of an
 * axis, or of the point's entry in "points". */
void sweep_locate_error(const struct spec *s, const char *basefile, const struct point *p,
			struct bs_err *err);
void sweep_point_release(struct point *p);
/* The ordered points: the listed ones, or the grid (first axis slowest); seeds fastest. */
struct point *sweep_make_points(const struct spec *s, size_t *np);
/* A point's `bucketsim run` words, its configuration checked as run would; INDEX of NP points
 * names it (sweep_point_name). */
int sweep_point_prepare(const struct spec *s, const char *basefile, struct point *p,
			 size_t index, size_t np, struct bs_err *err);
/* The sweep.json text: everything a rerun must match and --collect needs. */
/* The first input file whose hash differs between the sweep.json texts OLD and NEW (both
 * listing it), or NULL.  Owned by the caller. */
char *sweep_changed_input(const char *old, const char *new_text);
char *sweep_spec_text(const struct spec *s, const struct point *pts, size_t np);

#endif
