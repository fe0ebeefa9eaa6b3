/*
 * config_private.h — what the parameter table (params.c) lends the INI
 * loader (ini.c): setting a key with a location prefix for messages, and
 * the unknown key/section errors with their suggestions.
 */
#ifndef TALUS_IO_CONFIG_PRIVATE_H
#define TALUS_IO_CONFIG_PRIVATE_H

#include "io/config/config.h"

#include <stddef.h>

/* Longest key or section name that gets a suggestion. */
#define TALUS_PARAM_KEY_MAX 64

/* Sets key from value text (blanks trimmed, parsed and range-checked);
 * `where` prefixes messages ("file:line: " or ""). */
talus_status talus_params_set_at(talus_params *p, const char *key, const char *value,
                                 const char *where);
/* Records the unknown-key error, with a suggestion when one is close. */
talus_status talus_params_unknown_key(const char *key, const char *where);
/* TALUS_OK when `name` (shorter than cap) is a declared section; else the
 * unknown-section error, suggesting the nearest section. */
talus_status talus_params_section_check(const char *name, size_t cap, const char *where);

#endif /* TALUS_IO_CONFIG_PRIVATE_H */
