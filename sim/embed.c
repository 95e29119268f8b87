/*
 * embed: see embed.h.  The table itself is generated into $(BUILD)/gen/embedded.c.
 */
#include "sim/embed.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "sim/util.h"

const struct embedded_file *embedded_find(const char *path)
{
	for (const struct embedded_file *f = embedded_files; f->path; f++)
		if (!strcmp(f->path, path))
			return f;
	return NULL;
}

/* The parsed trees, by position in embedded_files (allocated on first use). */
static cJSON **json_cache;

const struct cJSON *embedded_json(const char *path)
{
	const struct embedded_file *f = embedded_find(path);
	if (!f)
		return NULL;
	if (!json_cache) {
		size_t n = 0;
		while (embedded_files[n].path)
			n++;
		json_cache = xcalloc(n, sizeof *json_cache);
	}
	cJSON **slot = &json_cache[f - embedded_files];
	if (!*slot)
		*slot = cJSON_ParseWithLength(f->data, f->size);
	return *slot;
}
