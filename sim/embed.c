/*
 * embed: see embed.h.  The table itself is generated into $(BUILD)/gen/embedded.c.
 */
#include "sim/embed.h"

#include <string.h>

const struct embedded_file *embedded_find(const char *path)
{
	for (const struct embedded_file *f = embedded_files; f->path; f++)
		if (!strcmp(f->path, path))
			return f;
	return NULL;
}
