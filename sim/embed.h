/*
 * embed: the project's data files (models/data/ and workloads/data/), compiled into
 * the binary so that bucketsim reads nothing from the source tree at run time.
 *
 * Each file is NUL-terminated in memory (size excludes the NUL).  Paths are as in the source
 * tree, e.g. "models/data/gaudi2.json".
 */
#ifndef BS_EMBED_H
#define BS_EMBED_H

#include <stddef.h>

struct embedded_file {
	const char *path;
	const char *data;
	size_t size;
};

/* NULL-terminated (path == NULL) table, generated at build time. */
extern const struct embedded_file embedded_files[];

/* The file at PATH, or NULL. */
const struct embedded_file *embedded_find(const char *path);

/* The embedded JSON file at PATH parsed, or NULL when there is none (or it is not JSON).  Each
 * file is parsed once, on first use, and kept for the life of the process: the tree is shared
 * and read-only (cJSON_Duplicate it to change it).  Not thread-safe: set-up code only. */
struct cJSON;
const struct cJSON *embedded_json(const char *path);

#endif
