/*
 * config_json: the JSON config file (`-c FILE`, a capacity `--system` file) loaded into the
 * configuration store (sim/config.h: config_load_json, config_load_json_text).
 *
 * Nested objects flatten to dotted keys, and every leaf goes through config_set() with origin
 * "file" and its line, exactly as `--set` would (a list becomes the text "a,b,c"); "env" is an
 * object of NAME: value (config_set_env, after the checks --env makes); null leaves a key at its
 * default.  A name given twice in one file, nested or dotted, is an error naming both lines.
 * Before cJSON parses the text, the NUL escapes and numbers cJSON would misread are refused at
 * their line (json_nul_escape, json_bad_number: sim/util.h), and a parse error is located at
 * its line.  On success the file becomes the config's file (config_locate names its lines);
 * after an error the keys set before it stay set.  Owns nothing past a call.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/config_int.h"

/* Text form of a JSON leaf; NULL (and an error) for a type that no key takes. */
static char *leaf_text(const cJSON *v)
{
	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (cJSON_IsBool(v))
		return xstrdup(cJSON_IsTrue(v) ? "true" : "false");
	if (cJSON_IsNumber(v)) {
		/* Range first: the cast of a double beyond int64 is undefined. */
		double d = v->valuedouble;
		if (d > -9e18 && d < 9e18 && d == floor(d))
			return xasprintf("%lld", (long long)d);
		return xasprintf("%.17g", d);
	}
	if (cJSON_IsArray(v)) {
		/* A list written as text "a,b,c" (fixed bucket boundaries, mixes, ...). */
		size_t cap = 64, n = 0;
		char *s = xmalloc(cap);
		s[0] = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, v) {
			char *t = leaf_text(it);
			if (!t || cJSON_IsArray(it)) {
				free(t);
				free(s);
				return NULL;
			}
			size_t need = n + strlen(t) + 2;
			if (need > cap)
				s = xrealloc(s, cap = need * 2);
			n += (size_t)sprintf(s + n, "%s%s", n ? "," : "", t);
			free(t);
		}
		return s;
	}
	return NULL;
}

/* The names a config file gave so far, each with its line: a key given twice in one file
 * (nested or dotted: {"a.b": 1, "a": {"b": 2}}) is refused rather than the later silently
 * winning.  An open-addressing set of owned strings. */
struct seen_names {
	char **name;
	long *line;
	uint32_t *hash;
	size_t n, cap;   /* cap: a power of two, at least twice n */
};

static void seen_release(struct seen_names *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->name[i]);
	free(s->name);
	free(s->line);
	free(s->hash);
	memset(s, 0, sizeof *s);
}

/* Adds NAME (given on LINE); returns the line of an earlier occurrence (its line, or -1 when
 * unknown), or 0 when it is new. */
static long seen_add(struct seen_names *s, const char *name, long line)
{
	if (2 * (s->n + 1) > s->cap) {
		struct seen_names old = *s;
		s->cap = old.cap ? 2 * old.cap : 64;
		s->name = xcalloc(s->cap, sizeof *s->name);
		s->line = xcalloc(s->cap, sizeof *s->line);
		s->hash = xcalloc(s->cap, sizeof *s->hash);
		for (size_t i = 0; i < old.cap; i++) {
			if (!old.name[i])
				continue;
			size_t k = old.hash[i] & (s->cap - 1);
			while (s->name[k])
				k = (k + 1) & (s->cap - 1);
			s->name[k] = old.name[i];
			s->line[k] = old.line[i];
			s->hash[k] = old.hash[i];
		}
		free(old.name);
		free(old.line);
		free(old.hash);
	}
	uint32_t h = config_key_hash(name);
	size_t k = h & (s->cap - 1);
	for (; s->name[k]; k = (k + 1) & (s->cap - 1))
		if (s->hash[k] == h && !strcmp(s->name[k], name))
			return s->line[k] > 0 ? s->line[k] : -1;
	s->name[k] = xstrdup(name);
	s->line[k] = line;
	s->hash[k] = h;
	s->n++;
	return 0;
}

/* Refuses NAME (a key, an object or "env.VARIABLE") given a second time in PATH. */
static int check_twice(struct seen_names *seen, const char *name, const char *field,
		       const char *path, long line, struct bs_err *err)
{
	long first = seen_add(seen, name, line);
	if (!first)
		return 0;
	if (first > 0)
		return bs_errf(err, BS_EXIT_INPUT, path, line, field,
			       "given twice in the file (first on line %ld)", first);
	return bs_errf(err, BS_EXIT_INPUT, path, line, field, "given twice in the file");
}

static int load_obj(struct config *c, const cJSON *obj, const char *prefix, const char *path,
		    const char *text, size_t *pos, struct seen_names *seen, struct bs_err *err)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		char *key = prefix ? xasprintf("%s.%s", prefix, it->string) : xstrdup(it->string);
		long line = json_member_line(text, it->string, pos);
		int rc = check_twice(seen, key, key, path, line, err);
		if (rc) {
			free(key);
			return rc;
		}
		if (!prefix && !strcmp(key, "env")) {
			if (!cJSON_IsObject(it)) {
				rc = bs_errf(err, BS_EXIT_INPUT, path, line, "env",
					     "expected an object of NAME: value");
			} else {
				const cJSON *ev;
				cJSON_ArrayForEach(ev, it) {
					long eline = json_member_line(text, ev->string, pos);
					char *ename = xasprintf("env.%s", ev->string);
					rc = check_twice(seen, ename, ev->string, path, eline, err);
					free(ename);
					if (rc)
						break;
					char *t = leaf_text(ev);
					if (!t || cJSON_IsArray(ev)) {
						free(t);
						rc = bs_errf(err, BS_EXIT_INPUT, path, eline, ev->string,
							     "expected a string, number or boolean");
						break;
					}
					rc = config_env_check(ev->string, t, BS_EXIT_INPUT, path, eline, err);
					if (!rc)
						config_set_env(c, ev->string, t, CFG_ORIGIN_FILE, eline);
					free(t);
					if (rc)
						break;
				}
			}
		} else if (cJSON_IsObject(it)) {
			rc = load_obj(c, it, key, path, text, pos, seen, err);
		} else if (cJSON_IsNull(it)) {
			rc = 0; /* null = leave at default/auto */
			if (!config_find(c, key))
				rc = config_unknown_key(c, BS_EXIT_INPUT, path, line, key, err);
		} else {
			char *t = leaf_text(it);
			if (!t)
				rc = bs_errf(err, BS_EXIT_INPUT, path, line, key,
					     "unsupported JSON value type");
			else
				rc = config_set(c, key, t, CFG_ORIGIN_FILE, path, line, err);
			free(t);
		}
		free(key);
		if (rc)
			return rc;
	}
	return 0;
}

int config_load_json(struct config *c, const char *path, struct bs_err *err)
{
	size_t len;
	char *text = read_file(path, &len, err);
	if (!text)
		return -1;
	int rc = strlen(text) != len
			 ? bs_errf(err, BS_EXIT_INPUT, path, text_line_of(text, strlen(text)), NULL,
				   "NUL byte in the file")
			 : config_load_json_text(c, path, text, err);
	free(text);
	return rc;
}

int config_load_json_text(struct config *c, const char *path, const char *text,
			  struct bs_err *err)
{
	size_t z = json_nul_escape(text, strlen(text));
	if (text[z])
		return bs_errf(err, BS_EXIT_INPUT, path, text_line_of(text, z), NULL, JSON_NUL_ESCAPE_MSG);
	size_t run, bad = json_bad_number(text, z, &run);
	if (bad < z)
		return bs_errf(err, BS_EXIT_INPUT, path, text_line_of(text, bad), NULL,
			       JSON_BAD_NUMBER_MSG, (int)(run > 40 ? 40 : run), text + bad);
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
	if (!root) {
		size_t off = end ? (size_t)(end - text) : 0, b = 0;
		while (text[b] == ' ' || text[b] == '\t' || text[b] == '\r' || text[b] == '\n')
			b++;
		if (!text[b])
			bs_errf(err, BS_EXIT_INPUT, path, 0, NULL, "empty file (a configuration is a "
				"JSON object, {} when it sets nothing)");
		else if (!end || !*end)
			bs_errf(err, BS_EXIT_INPUT, path, text_line_of(text, off), NULL,
				"invalid JSON: the file ends inside a value (cut short?)");
		else
			bs_errf(err, BS_EXIT_INPUT, path, text_line_of(text, off), NULL,
				"invalid JSON near '%.20s'", end);
		return -1;
	}
	int rc = 0;
	if (!cJSON_IsObject(root))
		rc = bs_errf(err, BS_EXIT_INPUT, path, 1, NULL, "expected a JSON object at top level");
	else {
		size_t pos = 0;
		struct seen_names seen = {0};
		rc = load_obj(c, root, NULL, path, text, &pos, &seen, err);
		seen_release(&seen);
	}
	cJSON_Delete(root);
	if (!rc) {
		free(c->file);
		c->file = xstrdup(path);
	}
	return rc;
}

