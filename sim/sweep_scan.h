/*
 * sweep_scan: a walk over the text of a sweep file (already parsed by cJSON, so valid JSON)
 * that finds what cJSON does not keep: the first member whose name an earlier member of the
 * same object has (cJSON keeps both and its look-ups find the first: a member given twice would
 * be read once and written to base.json twice), a key given once nested and once dotted, and the
 * line of a member named by its path ("axes.workload.rate", "points[2].seed").
 */
#ifndef BS_SWEEP_SCAN_H
#define BS_SWEEP_SCAN_H

#include <stdbool.h>
#include <stddef.h>

struct sweep_scan {
	const char *t;
	size_t len, i;
	long line;
	char path[512];
	long dup_line, first_line;
	const char *want;   /* sweep_file_line: the member looked for, and its line */
	long want_line;
	/* The paths of the members outside lists whose value is no object, with their lines: a
	 * key given once nested and once dotted ({"workload": {"num_requests": 5},
	 * "workload.num_requests": 6}) is the same key twice. */
	char **leaf;
	long *leaf_line;
	size_t nleaf;
};

/* Walks the value at d->i: true when a duplicate was found (d->path names it, d->dup_line and
 * d->first_line its two lines); with d->want set, notes its line in d->want_line and skips the
 * dotted-key check.  Start with t, len, line 1 (and want) set, the rest zero. */
bool sweep_scan_value(struct sweep_scan *d);
/* Skips white space as cJSON skips it (every byte up to 32), counting lines. */
void sweep_scan_ws(struct sweep_scan *d);
/* Frees what the walk noted (the leaf paths). */
void sweep_scan_release(struct sweep_scan *d);

#endif
