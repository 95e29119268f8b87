/*
 * config_int: what the configuration store (sim/config.c) offers its JSON loader
 * (sim/config_json.c): the hash of its key index, the error of an unknown key, and the --env
 * list's check and setter, so that a config file's keys and variables go through the same
 * rules as --set and --env.  Internal to sim/config*.c; the public interface is sim/config.h.
 */
#ifndef BS_CONFIG_INT_H
#define BS_CONFIG_INT_H

#include <stdint.h>

#include "sim/config.h"

/* FNV-1a of KEY, the hash of the key and --env indexes. */
uint32_t config_key_hash(const char *key);
/* KEY is not a config key: the error CODE at FILE:LINE, with the nearest key as a hint. */
int config_unknown_key(const struct config *c, int code, const char *file, long line,
		       const char *key, struct bs_err *err);
/* Refuses an --env NAME=VALUE no environment could hold (error CODE at PATH:LINE). */
int config_env_check(const char *name, const char *value, int code, const char *path,
		     long line, struct bs_err *err);
/* Sets --env NAME to VALUE from ORIGIN (LINE of the config file, else 0); a set from a lower
 * origin than the current one is ignored.  Returns 0. */
int config_set_env(struct config *c, const char *name, const char *value,
		   enum cfg_origin origin, long line);

#endif
