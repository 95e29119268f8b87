/*
 * registry: the only list of policy names.  Each family below lists its members, one line per
 * policy; a new policy is one new file plus one line here.  See policies/policy.h.
 */
#include <string.h>

#include "policies/bucketing.h"
#include "policies/policy.h"

/* ---- families (each section lists its members, then defines the family) ------------------ */

/* bucketing: shape-bucketing strategies (struct bucket_strategy, policies/bucketing.h), one
 * file each.  One line per strategy: X(the strategy's object name). */
#define BUCKETING_STRATEGIES(X)   \
	X(bucket_exponential)     \
	X(bucket_linear)          \
	X(bucket_padding_aware)   \
	X(bucket_unified)         \
	X(bucket_file)            \
	X(bucket_none)            \
	X(bucket_pow2)

#define BUCKETING_DECLARE(s) extern const struct bucket_strategy s;
#define BUCKETING_MEMBER(s) &s.info,
BUCKETING_STRATEGIES(BUCKETING_DECLARE)
static const struct policy_info *const bucketing_members[] = {
	BUCKETING_STRATEGIES(BUCKETING_MEMBER) NULL,
};
static const struct policy_family bucketing_family = {
	"bucketing", "bucketing.strategy", "shape-bucketing strategy: the warm-up bucket lists",
	bucketing_members,
};

/* ---- the registry ----------------------------------------------------------------------- */

const struct policy_family *const policy_families[] = {
	&bucketing_family,
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
