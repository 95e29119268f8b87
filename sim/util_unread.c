/*
 * util_unread: the record of settings reported set but never read (util.h, bs_unread_note):
 * a key, or an --env variable's name, noted when the warning or error about it is given, so that
 * `sweep` can refuse an axis over a setting that no point reads.  Owns the record (at most
 * UNREAD_MAX names, each a copy), emptied by bs_unread_reset.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

/* At most this many distinct unread settings are remembered per check (a configuration sets far
 * fewer keys). */
#define UNREAD_MAX 64
static char *unread_names[UNREAD_MAX];
static size_t n_unread;

void bs_unread_note(const char *name)
{
	if (bs_unread_noted(name) || n_unread == UNREAD_MAX)
		return;
	unread_names[n_unread++] = xstrdup(name);
}

bool bs_unread_noted(const char *name)
{
	for (size_t i = 0; i < n_unread; i++)
		if (!strcmp(unread_names[i], name))
			return true;
	return false;
}

void bs_unread_reset(void)
{
	for (size_t i = 0; i < n_unread; i++)
		free(unread_names[i]);
	n_unread = 0;
}
