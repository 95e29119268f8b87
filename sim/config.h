/*
 * config: the one table of configuration keys and the store of their effective values.
 *
 * Every key is a row `struct cfg_def` in a module's own table (sim_cfg_defs in sim/sim_cfg.c,
 * bucketing_cfg_defs, scheduler_cfg_defs, workload_cfg_defs, model_cfg_defs, ...), listed in
 * config_tables[] (sim/config_tables.c), or in the policy_info of the one policy that reads it
 * (policies/policy.h); the choices of a policy family's key are its registered members.  A JSON config file and `--set key=value` call the same
 * setter, config_set(); precedence is default < preset < file < command line (a later set of
 * the same or higher origin wins; a file never overrides the command line).  Unknown keys are
 * errors.
 *
 * A key whose default is NULL is "auto": unset until given, and its owner derives a value
 * (config_is_set() tells which).  Values are validated when set: type, range, choices.
 *
 * The vLLM-Gaudi environment variables are not keys: they live in a separate name=value list
 * (`--env NAME=VALUE`, or an "env" object in the config file) read with config_env().
 *
 * Lifetime: config_init() allocates, config_release() frees; getters return borrowed pointers
 * valid until the next config_set() of that key or config_release().
 */
#ifndef BS_CONFIG_H
#define BS_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/util.h"

enum cfg_type {
	CFG_INT,      /* int64 in [min, max] */
	CFG_DOUBLE,   /* double in [min, max] */
	CFG_BOOL,     /* true/false */
	CFG_STRING,   /* free text (a name, a path, a list written as text) */
	CFG_CHOICE,   /* one of `choices`, written "a|b|c" */
	CFG_READS,    /* in a policy's table of keys only (policies/policy.h, POLICY_READS): a key
		       * another module defines, which the policy reads; only `key` is used */
};

/* The units of the keys whose values name files: always a path (CFG_UNIT_FILE); a bundled name
 * or a path (CFG_UNIT_NAME_OR_FILE), a path being a value with a '/' or ending in .json, .jsonl
 * or .csv, which no bundled name does; a list NAME[:...],... of those (CFG_UNIT_FILE_LIST).
 * config_files() finds the files they name. */
#define CFG_UNIT_FILE "file"
#define CFG_UNIT_NAME_OR_FILE "name or file"
#define CFG_UNIT_FILE_LIST "name or file list"

struct cfg_def {
	const char *key;      /* dotted, e.g. "server.max_num_seqs"; NULL ends a table */
	enum cfg_type type;
	const char *def;      /* default written as text; NULL = auto (derived when unset) */
	double min, max;      /* numeric range, inclusive */
	const char *choices;  /* CFG_CHOICE only; ignored (NULL by convention) for the key of a
			       * policy family, whose members are the choices */
	const char *unit;     /* "", "tokens", "ms", ... for the README and --print-config */
	const char *doc;      /* one line */
};

enum cfg_origin { CFG_ORIGIN_DEFAULT, CFG_ORIGIN_PRESET, CFG_ORIGIN_FILE, CFG_ORIGIN_CMDLINE,
		  CFG_ORIGIN_DERIVED };

struct cfg_entry {
	const struct cfg_def *def;
	char *text;           /* NULL when unset (auto) */
	enum cfg_origin origin;
	long line;            /* line in the config file when origin is FILE, else 0 */
	int64_t i;
	double d;
	bool b;
};

struct cfg_env {
	char *name, *value;
	enum cfg_origin origin;
	long line;            /* line in the config file when origin is FILE, else 0 */
};

struct cfg_slot {
	uint32_t hash;        /* FNV-1a of the key */
	uint32_t idx;         /* entry index + 1; 0 marks an empty slot */
};

struct config {
	struct cfg_entry *e;
	size_t n;
	struct cfg_slot *slot;  /* open-addressing index of e[] by key (config_find) */
	size_t nslot;           /* a power of two, at least twice n */
	struct cfg_env *env;
	size_t nenv;
	struct cfg_slot *envslot;  /* the same index of env[] by name (config_env) */
	size_t nenvslot;           /* 0, or a power of two at least twice nenv; env[] has room
				    * for nenvslot / 2 */
	char *file;           /* the config file loaded, or NULL */
};

/* NULL-terminated list of the module tables. */
extern const struct cfg_def *const config_tables[];

void config_init(struct config *c);
void config_release(struct config *c);

/* Sets KEY to VALUE (text).  FILE/LINE name the source for errors (NULL/0 for the command
 * line).  A set from a lower origin than the current one is ignored. */
int config_set(struct config *c, const char *key, const char *value, enum cfg_origin origin,
	       const char *file, long line, struct bs_err *err);
/* "key=value" as given to --set. */
int config_set_arg(struct config *c, const char *arg, struct bs_err *err);
/* "NAME=VALUE" as given to --env. */
int config_set_env_arg(struct config *c, const char *arg, enum cfg_origin origin,
		       struct bs_err *err);
/* Loads a JSON config: nested objects flatten to dotted keys ({"server": {"block_size": 64}} is
 * server.block_size); dotted keys may also be written flat; "env" is an object of strings. */
int config_load_json(struct config *c, const char *path, struct bs_err *err);
/* The same from TEXT (NUL-terminated; PATH names it in errors and becomes the config's file). */
int config_load_json_text(struct config *c, const char *path, const char *text,
			  struct bs_err *err);
/* Records a value derived by a module for an auto key (origin "derived"), so the effective
 * config written to outputs is complete. */
void config_set_derived(struct config *c, const char *key, const char *value);

const struct cfg_entry *config_find(const struct config *c, const char *key);
bool config_is_set(const struct config *c, const char *key);
int64_t config_int(const struct config *c, const char *key);
double config_double(const struct config *c, const char *key);
bool config_bool(const struct config *c, const char *key);
/* Text of the value, or NULL when unset.  Also valid for numeric keys. */
const char *config_str(const struct config *c, const char *key);
/* The index of V among CHOICES ("a|b|c"), -1 when it is none of them. */
int config_choice_index(const char *choices, const char *v);
/* For every set key of C whose values name files (CFG_UNIT_FILE, CFG_UNIT_FILE_LIST): calls FN
 * with the key, its value with each name that is an existing file made absolute, and those
 * files (absolute).  Names that are no file (a bundled trace, a profile name) stay as they are;
 * FN is not called for a key naming none.  The same for every --env variable whose unit is
 * CFG_UNIT_FILE in env_var_defs[] (policies/bucket_env.c), with ENV true and its name as KEY. */
void config_files(const struct config *c,
		  void (*fn)(void *ctx, bool env, const char *key, const char *abs_value,
			     char *const *files, size_t nfiles),
		  void *ctx);
/* Value of an --env variable, or NULL when not given. */
const char *config_env(const struct config *c, const char *name);

const char *config_origin_name(enum cfg_origin o);
/* The choices of choice key D written into BUF, separated by SEP: its policy family's members
 * (policies/registry.c) when a family is chosen by D, else D->choices.  Returns BUF. */
const char *config_choices(const struct cfg_def *d, const char *sep, char *buf, size_t size);
/* Places an error about a key or --env variable found after loading: when ERR's field names one
 * and ERR carries no line (or names the config file without a line), its file and line become
 * where the value was given (the config file and line; no file for the command line). */
void config_locate(const struct config *c, struct bs_err *err);
/* Prints every key with its effective value and origin (for --print-config). */
void config_print(const struct config *c, FILE *out);
/* FNV-1a hash of the effective configuration in canonical form: every key in table order with
 * its value as parsed (integers in decimal, doubles as %.17g, booleans true/false, text as
 * given; unset autos as a distinct mark), then the --env variables sorted by name, name and
 * value.  So 100 and 1e2 hash alike.  The config_hash of output metadata. */
uint64_t config_hash(const struct config *c);
/* A JSON object of every key (set or derived; unset autos are null) in table order, plus "env"
 * when any variable was given.  Integers print as integers, booleans as booleans. */
struct cJSON *config_to_json(const struct config *c);

#endif
