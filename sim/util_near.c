/*
 * util_near: the nearest known name to a mistyped one, for the "did you mean" hints of unknown
 * config keys and --env variables (util.h, struct str_near), by Levenshtein distance
 * (str_edit_distance), at most STR_NEAR_MAX edits.  Owns nothing; the names are borrowed.
 */
#include <stdio.h>
#include <string.h>

#include "sim/util.h"

void str_near_init(struct str_near *n, const char *name)
{
	*n = (struct str_near){name, NULL, STR_NEAR_MAX + 1};
}

void str_near_try(struct str_near *n, const char *candidate)
{
	size_t ln = strlen(n->name), lc = strlen(candidate);
	if ((ln > lc ? ln - lc : lc - ln) >= n->dist)
		return; /* the distance is at least the difference in length */
	size_t e = str_edit_distance(n->name, candidate, n->dist - 1);
	if (e < n->dist) {
		n->dist = e;
		n->best = candidate;
	}
}

void str_near_hint(const struct str_near *n, char *buf, size_t size)
{
	if (n->best)
		snprintf(buf, size, "; did you mean %s?", n->best);
	else if (size)
		buf[0] = 0;
}

/* Levenshtein distance of A and B when it is at most MAX (below SIZE_MAX), else MAX + 1 (also
 * when either is over 64 bytes).  No cell of a row is below the smallest of the row before it, so the result
 * is at least the smallest value of any row: the computation stops at the first row whose
 * smallest value is over MAX.  (Its own translation unit keeps it out of its callers, so the
 * fuzzing build can leave it out of the coverage instrumentation: tests/fuzz/coverage.ignore.) */
size_t str_edit_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b), row[65];
	if (la > 64 || lb > 64)
		return max + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], low = i;
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
			if (best < low)
				low = best;
		}
		if (low > max)
			return max + 1;
	}
	return row[lb] > max ? max + 1 : row[lb];
}
