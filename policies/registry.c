/*
 * registry: the only list of policy names.  Each family below lists its members, one line per
 * policy; a new policy is one new file plus one line here.  See policies/policy.h.
 */
#include <string.h>

#include "policies/policy.h"

/* ---- families (each section lists its members, then defines the family) ------------------ */

/* ---- the registry ----------------------------------------------------------------------- */

const struct policy_family *const policy_families[] = {
	NULL,
};

const struct policy_family *policy_family_by_name(const char *name)
{
	for (size_t i = 0; policy_families[i]; i++)
		if (!strcmp(policy_families[i]->name, name))
			return policy_families[i];
	return NULL;
}

const struct policy_family *policy_family_by_key(const char *key)
{
	for (size_t i = 0; policy_families[i]; i++)
		if (!strcmp(policy_families[i]->key, key))
			return policy_families[i];
	return NULL;
}

const struct policy_info *policy_find(const struct policy_family *f, const char *name)
{
	for (size_t i = 0; f->members[i]; i++)
		if (!strcmp(f->members[i]->name, name))
			return f->members[i];
	return NULL;
}
