/*
 * sweep_scan: see sweep_scan.h.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sweep_scan.h"
#include "sim/util.h"

void sweep_scan_release(struct sweep_scan *d)
{
	for (size_t i = 0; i < d->nleaf; i++)
		free(d->leaf[i]);
	free(d->leaf);
	free(d->leaf_line);
}

/* White space as cJSON skips it: every byte up to 32. */
void sweep_scan_ws(struct sweep_scan *d)
{
	for (; d->i < d->len && (unsigned char)d->t[d->i] <= 32; d->i++)
		d->line += d->t[d->i] == '\n';
}

static void scan_string(struct sweep_scan *d)
{
	for (d->i++; d->i < d->len && d->t[d->i] != '"'; d->i++) {
		if (d->t[d->i] == '\\')
			d->i++;
		else
			d->line += d->t[d->i] == '\n';
	}
	d->i++;
}

/* Returns true when a duplicate was found (d->path names it). */
bool sweep_scan_value(struct sweep_scan *d)
{
	sweep_scan_ws(d);
	if (d->i >= d->len)
		return false;
	char c = d->t[d->i];
	size_t plen = strlen(d->path);
	if (c == '{' || c == '[') {
		char **names = NULL;
		long *lines = NULL;
		size_t n = 0, index = 0;
		bool dup = false;
		for (d->i++;;) {
			size_t at = d->i;
			sweep_scan_ws(d);
			if (d->i >= d->len || d->t[d->i] == (c == '{' ? '}' : ']')) {
				d->i++;
				break;
			}
			if (c == '{') {
				size_t k0 = d->i;
				long kline = d->line;
				scan_string(d);
				cJSON *k = cJSON_ParseWithLength(d->t + k0, d->i - k0);
				const char *name = cJSON_IsString(k) ? k->valuestring : "";
				snprintf(d->path + plen, sizeof d->path - plen, "%s%s", plen ? "." : "",
					 name);
				if (d->want && !d->want_line && !strcmp(d->path, d->want))
					d->want_line = kline;
				for (size_t j = 0; j < n && !dup; j++)
					if (!strcmp(names[j], name)) {
						dup = true;
						d->dup_line = kline;
						d->first_line = lines[j];
					}
				names = xrealloc(names, (n + 1) * sizeof *names);
				lines = xrealloc(lines, (n + 1) * sizeof *lines);
				names[n] = xstrdup(name);
				lines[n++] = kline;
				cJSON_Delete(k);
				if (dup)
					break;
				sweep_scan_ws(d);
				d->i++; /* ':' */
				sweep_scan_ws(d);
				if (!d->want && d->i < d->len && d->t[d->i] != '{' &&
				    !strchr(d->path, '[')) {
					for (size_t j = 0; j < d->nleaf && !dup; j++)
						if (!strcmp(d->leaf[j], d->path)) {
							dup = true;
							d->dup_line = kline;
							d->first_line = d->leaf_line[j];
						}
					if (dup)
						break;
					d->leaf = xrealloc(d->leaf, (d->nleaf + 1) * sizeof *d->leaf);
					d->leaf_line = xrealloc(d->leaf_line,
								(d->nleaf + 1) * sizeof *d->leaf_line);
					d->leaf[d->nleaf] = xstrdup(d->path);
					d->leaf_line[d->nleaf++] = kline;
				}
			} else {
				snprintf(d->path + plen, sizeof d->path - plen, "[%zu]", index++);
				if (d->want && !d->want_line && !strcmp(d->path, d->want))
					d->want_line = d->line;
			}
			if ((dup = sweep_scan_value(d)))
				break;
			d->path[plen] = 0;
			sweep_scan_ws(d);
			if (d->i < d->len && d->t[d->i] == ',')
				d->i++;
			if (d->i == at) /* not reached on valid JSON: never loop without moving */
				break;
		}
		for (size_t j = 0; j < n; j++)
			free(names[j]);
		free(names);
		free(lines);
		return dup;
	}
	if (c == '"') {
		scan_string(d);
		return false;
	}
	while (d->i < d->len && (unsigned char)d->t[d->i] > 32 && !strchr(",]}", d->t[d->i]))
		d->i++;
	return false;
}
