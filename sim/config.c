/*
 * config: see config.h.  The key tables are listed in sim/config_tables.c; a JSON config file
 * is loaded by sim/config_json.c (through sim/config_int.h).
 */
#include "sim/config_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "policies/bucketing.h"
#include "policies/policy.h"

static const char *const origin_names[] = {"default", "preset", "file", "command line",
					   "derived"};

const char *config_origin_name(enum cfg_origin o)
{
	return origin_names[o];
}

/* Every key definition in print order: the module tables, then each policy's own keys in
 * registry order.  Returns how many; fills OUT when not NULL. */
static size_t all_defs(const struct cfg_def **out)
{
	size_t n = 0;
	for (size_t t = 0; config_tables[t]; t++)
		for (const struct cfg_def *d = config_tables[t]; d->key; d++, n++)
			if (out)
				out[n] = d;
	for (size_t f = 0; policy_families[f]; f++)
		for (size_t m = 0; policy_families[f]->members[m]; m++) {
			const struct policy_info *pi = policy_families[f]->members[m];
			if (policy_nkeys(pi) > POLICY_MAX_KEYS) /* its par[] could not hold them */
				BUG("policy '%s' has %zu keys, more than POLICY_MAX_KEYS (%d)", pi->name,
				    policy_nkeys(pi), POLICY_MAX_KEYS);
			for (const struct cfg_def *k = pi->keys; k && k->key; k++)
				if (k->type == CFG_INT && (k->min < -0x1p53 || k->max > 0x1p53))
					BUG("policy '%s': key '%s' ranges beyond 2^53, inexact in par[]",
					    pi->name, k->key);
			/* Its own keys; a key it only reads is defined by its owner. */
			for (const struct cfg_def *d = pi->keys; d && d->key; d++)
				if (d->type != CFG_READS) {
					if (out)
						out[n] = d;
					n++;
				}
		}
	return n;
}

/* Every key a policy declares it reads (POLICY_READS) is defined by some module, as a number,
 * a boolean or a choice (a text value has no par[] value), an integer within 2^53. */
static void check_policy_reads(const struct config *c)
{
	for (size_t f = 0; policy_families[f]; f++)
		for (size_t m = 0; policy_families[f]->members[m]; m++) {
			const struct policy_info *pi = policy_families[f]->members[m];
			for (const struct cfg_def *d = pi->keys; d && d->key; d++) {
				if (d->type != CFG_READS)
					continue;
				const struct cfg_entry *e = config_find(c, d->key);
				if (!e)
					BUG("policy '%s' reads key '%s', which no module defines",
					    pi->name, d->key);
				if (e->def->type == CFG_STRING)
					BUG("policy '%s' reads text key '%s': par[] holds numbers",
					    pi->name, d->key);
				if (e->def->type == CFG_INT &&
				    (e->def->min < -0x1p53 || e->def->max > 0x1p53))
					BUG("policy '%s': key '%s' ranges beyond 2^53, inexact in par[]",
					    pi->name, d->key);
			}
		}
}

/* FNV-1a of the string P with its terminating NUL (so that "ab","c" and "a","bc" differ). */
static uint64_t fnv(uint64_t h, const char *p)
{
	return fnv1a(h, p, strlen(p) + 1);
}

uint32_t config_key_hash(const char *key)
{
	return (uint32_t)fnv(FNV1A_BASIS, key);
}

/* The name of entry IDX (0-based) of C's keys, or of its --env variables when ENV. */
static const char *name_at(const struct config *c, bool env, size_t idx)
{
	return env ? c->env[idx].name : c->e[idx].def->key;
}

/* The slot of NAME (hash H) in C's index of keys or, when ENV, of --env variables: its entry's,
 * or the empty one where it would go. */
static struct cfg_slot *slot_of(const struct config *c, bool env, const char *name, uint32_t h)
{
	struct cfg_slot *slots = env ? c->envslot : c->slot;
	size_t mask = (env ? c->nenvslot : c->nslot) - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct cfg_slot *s = &slots[i];
		if (!s->idx || (s->hash == h && !strcmp(name_at(c, env, s->idx - 1), name)))
			return s;
	}
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof *c);
	size_t n = all_defs(NULL);
	const struct cfg_def **defs = xmalloc(n * sizeof *defs);
	all_defs(defs);
	c->e = xcalloc(n, sizeof *c->e);
	for (c->nslot = 16; c->nslot < 2 * n; c->nslot *= 2)
		;
	c->slot = xcalloc(c->nslot, sizeof *c->slot);
	for (size_t i = 0; i < n; i++) {
		const struct cfg_def *d = defs[i];
		uint32_t h = config_key_hash(d->key);
		struct cfg_slot *s = slot_of(c, false, d->key, h);
		if (s->idx)
			BUG("config key '%s' defined twice", d->key);
		struct cfg_entry *e = &c->e[c->n++];
		e->def = d;
		s->hash = h;
		s->idx = (uint32_t)c->n;
		if (d->def) {
			struct bs_err err = {0};
			if (config_set(c, d->key, d->def, CFG_ORIGIN_DEFAULT, NULL, 0, &err))
				BUG("bad default for '%s': %s", d->key, err.msg);
		}
	}
	free(defs);
	check_policy_reads(c);
}

const char *config_choices(const struct cfg_def *d, const char *sep, char *buf, size_t size)
{
	const struct policy_family *f = policy_family_by_key(d->key);
	if (!f) {
		snprintf(buf, size, "%s", d->choices ? d->choices : "");
		return buf;
	}
	size_t len = 0;
	buf[0] = 0;
	for (size_t m = 0; f->members[m] && len < size; m++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", m ? sep : "",
					f->members[m]->name);
	return buf;
}

void config_release(struct config *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].text);
	for (size_t i = 0; i < c->nenv; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
	}
	free(c->e);
	free(c->slot);
	free(c->env);
	free(c->envslot);
	free(c->file);
	memset(c, 0, sizeof *c);
}

static struct cfg_entry *find_mut(const struct config *c, const char *key)
{
	if (!c->nslot)
		return NULL; /* released */
	const struct cfg_slot *s = slot_of(c, false, key, config_key_hash(key));
	return s->idx ? &c->e[s->idx - 1] : NULL;
}

const struct cfg_entry *config_find(const struct config *c, const char *key)
{
	return find_mut(c, key);
}

int config_choice_index(const char *choices, const char *v)
{
	size_t n = strlen(v);
	int i = 0;
	for (const char *p = choices; *p; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, v, n))
			return i;
		if (!bar)
			break;
		p = bar + 1;
	}
	return -1;
}

/* KEY is not a config key: the error, with the nearest key as a hint (as an unknown --env
 * variable's warning has: str_near). */
int config_unknown_key(const struct config *c, int code, const char *file, long line,
		       const char *key, struct bs_err *err)
{
	struct str_near near;
	str_near_init(&near, key);
	for (size_t i = 0; i < c->n; i++)
		str_near_try(&near, c->e[i].def->key);
	char hint[160];
	str_near_hint(&near, hint, sizeof hint);
	return bs_errf(err, code, file, line, key,
		       "unknown config key (see 'bucketsim list keys')%s", hint);
}

int config_set(struct config *c, const char *key, const char *value, enum cfg_origin origin,
	       const char *file, long line, struct bs_err *err)
{
	int code = file ? BS_EXIT_INPUT : BS_EXIT_USAGE;
	struct cfg_entry *e = find_mut(c, key);
	if (!e)
		return config_unknown_key(c, code, file, line, key, err);
	/* (a key set back to auto keeps its origin, so a lower one still cannot set it) */
	if ((e->text || e->origin != CFG_ORIGIN_DEFAULT) && origin < e->origin)
		return 0;
	char why[256];
	const struct cfg_def *d = e->def;
	if (!d->def && !strcmp(value, "auto")) {
		/* A key whose default is auto set back to it: unset again, as if never set (so a
		 * value from -c can be undone with --set K=auto, and a sweep can vary it against
		 * its default). */
		free(e->text);
		e->text = NULL;
		e->origin = origin;
		e->line = origin == CFG_ORIGIN_FILE ? line : 0;
		return 0;
	}
	struct cfg_entry v = *e;
	switch (d->type) {
	case CFG_INT:
		if (parse_i64(value, (int64_t)d->min, (int64_t)d->max, &v.i, why, sizeof why))
			return bs_errf(err, code, file, line, key, "%s", why);
		v.d = (double)v.i;
		break;
	case CFG_DOUBLE:
		if (parse_f64(value, d->min, d->max, &v.d, why, sizeof why))
			return bs_errf(err, code, file, line, key, "%s", why);
		break;
	case CFG_BOOL:
		if (parse_bool(value, &v.b, why, sizeof why))
			return bs_errf(err, code, file, line, key, "%s", why);
		value = v.b ? "true" : "false";
		break;
	case CFG_CHOICE: {
		/* A policy family's key: its members are the choices (policies/registry.c). */
		const struct policy_family *f = policy_family_by_key(key);
		if (f && !policy_find(f, value)) {
			char valid[1024];
			return bs_errf(err, code, file, line, key, "unknown %s '%s'; valid: %s",
				       f->name, value, config_choices(d, ", ", valid, sizeof valid));
		}
		if (!f && config_choice_index(d->choices, value) < 0)
			return bs_errf(err, code, file, line, key, "expected one of %s, got '%s'",
				       d->choices, value);
		break;
	}
	case CFG_STRING:
		break;
	case CFG_READS:
		BUG("key '%s' defined as read only", key); /* never a definition: config_init */
	}
	free(e->text);
	*e = v;
	e->text = xstrdup(value);
	e->origin = origin;
	e->line = origin == CFG_ORIGIN_FILE ? line : 0;
	return 0;
}

void config_set_derived(struct config *c, const char *key, const char *value)
{
	struct cfg_entry *e = find_mut(c, key);
	if (!e)
		BUG("derived value for unknown key '%s'", key);
	if (e->text && e->origin != CFG_ORIGIN_DERIVED)
		return;
	struct bs_err err = {0};
	free(e->text);
	e->text = NULL;
	if (config_set(c, key, value, CFG_ORIGIN_DERIVED, NULL, 0, &err))
		BUG("derived value '%s' for '%s' rejected: %s", value, key, err.msg);
}

int config_set_arg(struct config *c, const char *arg, struct bs_err *err)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return bs_errf(err, BS_EXIT_USAGE, NULL, 0, NULL,
			       "--set takes key=value, got '%s'", arg);
	char *key = xstrdup(arg);
	key[eq - arg] = 0;
	int rc = config_set(c, key, eq + 1, CFG_ORIGIN_CMDLINE, NULL, 0, err);
	free(key);
	return rc;
}

/* The index of --env NAME in C->env, or -1. */
static ptrdiff_t env_index(const struct config *c, const char *name)
{
	if (!c->nenv)
		return -1;
	const struct cfg_slot *s = slot_of(c, true, name, config_key_hash(name));
	return s->idx ? (ptrdiff_t)s->idx - 1 : -1;
}

int config_set_env(struct config *c, const char *name, const char *value,
		   enum cfg_origin origin, long line)
{
	ptrdiff_t i = env_index(c, name);
	if (i >= 0) {
		if (origin < c->env[i].origin)
			return 0;
		free(c->env[i].value);
		c->env[i].value = xstrdup(value);
		c->env[i].origin = origin;
		c->env[i].line = line;
		return 0;
	}
	if (2 * (c->nenv + 1) > c->nenvslot) {
		/* Double the index, and the list to half its size; put every variable back in. */
		free(c->envslot);
		c->nenvslot = c->nenvslot ? 2 * c->nenvslot : 16;
		c->envslot = xcalloc(c->nenvslot, sizeof *c->envslot);
		c->env = xrealloc(c->env, c->nenvslot / 2 * sizeof *c->env);
		for (size_t k = 0; k < c->nenv; k++) {
			uint32_t h = config_key_hash(c->env[k].name);
			struct cfg_slot *s = slot_of(c, true, c->env[k].name, h);
			s->hash = h;
			s->idx = (uint32_t)k + 1;
		}
	}
	c->env[c->nenv].name = xstrdup(name);
	c->env[c->nenv].value = xstrdup(value);
	c->env[c->nenv].origin = origin;
	c->env[c->nenv].line = line;
	c->nenv++;
	uint32_t h = config_key_hash(name);
	struct cfg_slot *s = slot_of(c, true, name, h);
	s->hash = h;
	s->idx = (uint32_t)c->nenv;
	return 0;
}

/* Refuses an environment variable no environment could hold: a name that is not a portable
 * one (a letter or '_', then letters, digits and '_': an empty name, or one with '=' or a
 * newline, could not be exported, and a point command emitted with it would break), or a value
 * with a control character. */
int config_env_check(const char *name, const char *value, int code, const char *path,
		     long line, struct bs_err *err)
{
	bool ok = (name[0] == '_' || isalpha((unsigned char)name[0]));
	for (const char *p = name; ok && *p; p++)
		ok = *p == '_' || isalnum((unsigned char)*p);
	if (!ok)
		return bs_errf(err, code, path, line, name[0] ? name : "env", "%s (a variable name "
			       "is a letter or '_', then letters, digits and '_')",
			       name[0] ? "not a variable name" : "an empty variable name");
	for (const char *p = value; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return bs_errf(err, code, path, line, name, "a control character in the "
				       "value");
	return 0;
}

int config_set_env_arg(struct config *c, const char *arg, enum cfg_origin origin,
		       struct bs_err *err)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return bs_errf(err, BS_EXIT_USAGE, NULL, 0, NULL,
			       "--env takes NAME=VALUE, got '%s'", arg);
	char *name = xstrdup(arg);
	name[eq - arg] = 0;
	int rc = config_env_check(name, eq + 1, BS_EXIT_USAGE, NULL, 0, err);
	if (!rc)
		config_set_env(c, name, eq + 1, origin, 0);
	free(name);
	return rc;
}

const char *config_env(const struct config *c, const char *name)
{
	ptrdiff_t i = env_index(c, name);
	return i >= 0 ? c->env[i].value : NULL;
}

bool config_is_set(const struct config *c, const char *key)
{
	const struct cfg_entry *e = config_find(c, key);
	if (!e)
		BUG("unknown config key '%s'", key);
	return e->text != NULL;
}

static const struct cfg_entry *get(const struct config *c, const char *key, enum cfg_type t)
{
	const struct cfg_entry *e = config_find(c, key);
	if (!e)
		BUG("unknown config key '%s'", key);
	if (e->def->type != t && !(t == CFG_STRING))
		BUG("config key '%s' read with the wrong type", key);
	return e;
}

int64_t config_int(const struct config *c, const char *key)
{
	const struct cfg_entry *e = get(c, key, CFG_INT);
	if (!e->text)
		BUG("config key '%s' read while unset", key);
	return e->i;
}

double config_double(const struct config *c, const char *key)
{
	const struct cfg_entry *e = config_find(c, key);
	if (!e)
		BUG("unknown config key '%s'", key);
	if (e->def->type != CFG_DOUBLE && e->def->type != CFG_INT)
		BUG("config key '%s' read as a number", key);
	if (!e->text)
		BUG("config key '%s' read while unset", key);
	return e->d;
}

bool config_bool(const struct config *c, const char *key)
{
	const struct cfg_entry *e = get(c, key, CFG_BOOL);
	if (!e->text)
		BUG("config key '%s' read while unset", key);
	return e->b;
}

const char *config_str(const struct config *c, const char *key)
{
	const struct cfg_entry *e = config_find(c, key);
	if (!e)
		BUG("unknown config key '%s'", key);
	return e->text;
}

void config_print(const struct config *c, FILE *out)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct cfg_entry *e = &c->e[i];
		fprintf(out, "%-40s %-24s (%s)\n", e->def->key, e->text ? e->text : "auto",
			e->text ? config_origin_name(e->origin) : "unset");
	}
	for (size_t i = 0; i < c->nenv; i++)
		fprintf(out, "env %-36s %-24s (%s)\n", c->env[i].name, c->env[i].value,
			config_origin_name(c->env[i].origin));
}

static int cmp_env(const void *a, const void *b)
{
	return strcmp((*(const struct cfg_env *const *)a)->name,
		      (*(const struct cfg_env *const *)b)->name);
}

uint64_t config_hash(const struct config *c)
{
	uint64_t h = FNV1A_BASIS;
	char num[40];
	for (size_t i = 0; i < c->n; i++) {
		const struct cfg_entry *e = &c->e[i];
		const char *v = "\x01";
		if (e->text && e->def->type == CFG_INT) {
			snprintf(num, sizeof num, "%lld", (long long)e->i);
			v = num;
		} else if (e->text && e->def->type == CFG_DOUBLE) {
			snprintf(num, sizeof num, "%.17g", e->d);
			v = num;
		} else if (e->text) {
			v = e->text;
		}
		h = fnv(fnv(h, e->def->key), v);
	}
	const struct cfg_env **env = xmalloc((c->nenv ? c->nenv : 1) * sizeof *env);
	for (size_t i = 0; i < c->nenv; i++)
		env[i] = &c->env[i];
	qsort(env, c->nenv, sizeof *env, cmp_env);
	h = fnv(h, "\x02env");
	for (size_t i = 0; i < c->nenv; i++)
		h = fnv(fnv(h, env[i]->name), env[i]->value);
	free(env);
	return h;
}

void config_locate(const struct config *c, struct bs_err *err)
{
	if (!err->code || !err->field[0] || err->line > 0)
		return;
	if (err->file[0] && !(c->file && !strcmp(err->file, c->file)))
		return;
	enum cfg_origin origin;
	long line;
	const struct cfg_entry *e = config_find(c, err->field);
	ptrdiff_t i = e ? -1 : env_index(c, err->field);
	if (e && e->text) {
		origin = e->origin;
		line = e->line;
	} else if (i >= 0) {
		origin = c->env[i].origin;
		line = c->env[i].line;
	} else {
		return;
	}
	if (origin == CFG_ORIGIN_FILE && c->file) {
		snprintf(err->file, sizeof err->file, "%s", c->file);
		err->line = line;
	} else if (origin == CFG_ORIGIN_CMDLINE) {
		err->file[0] = 0;
	}
}

cJSON *config_to_json(const struct config *c)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; i < c->n; i++) {
		const struct cfg_entry *e = &c->e[i];
		cJSON *v;
		if (!e->text)
			v = cJSON_CreateNull();
		else if (e->def->type == CFG_INT) {
			char num[32];
			snprintf(num, sizeof num, "%lld", (long long)e->i);
			v = cJSON_CreateRaw(num);
		}
		else if (e->def->type == CFG_DOUBLE)
			v = cJSON_CreateNumber(e->d);
		else if (e->def->type == CFG_BOOL)
			v = cJSON_CreateBool(e->b);
		else
			v = cJSON_CreateString(e->text);
		cJSON_AddItemToObject(o, e->def->key, v);
	}
	if (c->nenv) {
		cJSON *env = cJSON_CreateObject();
		for (size_t i = 0; i < c->nenv; i++)
			cJSON_AddStringToObject(env, c->env[i].name, c->env[i].value);
		cJSON_AddItemToObject(o, "env", env);
	}
	return o;
}

/* Whether NAME, the value of a key that takes a bundled name or a path, is a path: it holds a
 * '/' or ends in .json, .jsonl or .csv (CFG_UNIT_NAME_OR_FILE). */
static bool names_path(const char *name)
{
	static const char *const ext[] = {".json", ".jsonl", ".csv"};
	size_t n = strlen(name);
	if (strchr(name, '/'))
		return true;
	for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
		size_t k = strlen(ext[i]);
		if (n > k && !strcmp(name + n - k, ext[i]))
			return true;
	}
	return false;
}

void config_files(const struct config *c,
		  void (*fn)(void *ctx, bool env, const char *key, const char *abs_value,
			     char *const *files, size_t nfiles),
		  void *ctx)
{
	/* The --env variables whose value names a file (their unit in env_var_defs[]). */
	for (size_t i = 0; i < c->nenv; i++) {
		const struct env_var_def *d = env_var_find(c->env[i].name);
		if (!d || !d->unit || strcmp(d->unit, CFG_UNIT_FILE))
			continue;
		char *abs = abs_file_path(c->env[i].value);
		if (abs)
			fn(ctx, true, c->env[i].name, abs, &abs, 1);
		free(abs);
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct cfg_entry *e = &c->e[i];
		const char *u = e->def->unit;
		bool list = u && !strcmp(u, CFG_UNIT_FILE_LIST);
		bool path_only = u && !strcmp(u, CFG_UNIT_FILE);
		if (!e->text || !u || (!list && !path_only && strcmp(u, CFG_UNIT_NAME_OR_FILE)))
			continue;
		/* Each entry: a NAME (up to ':' in a list), kept or made absolute, then the rest. */
		char *out = NULL, **files = NULL;
		size_t len = 0, nf = 0;
		FILE *o = open_memstream(&out, &len);
		for (const char *p = e->text; *p;) {
			size_t n = list ? strcspn(p, ",") : strlen(p);
			size_t nm = list ? strcspn(p, ":,") : n;
			char *name = xstrndup(p, nm);
			char *abs = path_only || names_path(name) ? abs_file_path(name) : NULL;
			if (abs) {
				files = xrealloc(files, (nf + 1) * sizeof *files);
				files[nf++] = abs;
			}
			fprintf(o, "%s%.*s", abs ? abs : name, (int)(n - nm), p + nm);
			free(name);
			p += n;
			if (*p == ',')
				fputc(*p++, o);
		}
		fclose(o);
		if (nf)
			fn(ctx, false, e->def->key, out, files, nf);
		for (size_t k = 0; k < nf; k++)
			free(files[k]);
		free(files);
		free(out);
	}
}
