/*
 * talus_params.h — the public parameter API: one table of declared keys
 * ("section.key", each with type, range, default, unit and description)
 * and parameter sets over it. Implemented by io/config; part of talus.h.
 */
#ifndef TALUS_PARAMS_H
#define TALUS_PARAMS_H

#include "talus_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Parameters: one table of declared keys ("section.key"), each with a
 * type, range, default, unit and description.
 * ------------------------------------------------------------------- */
typedef struct talus_params talus_params;

typedef enum talus_param_type {
  TALUS_PARAM_REAL = 0,
  TALUS_PARAM_INT = 1,
  TALUS_PARAM_BOOL = 2,
  TALUS_PARAM_ENUM = 3
} talus_param_type;

typedef struct talus_param_info {
  const char *key; /* "section.key" */
  talus_param_type type;
  double min, max;     /* inclusive bounds (REAL, INT) */
  double def;          /* default (REAL, INT, BOOL, index for ENUM) */
  const char *choices; /* ENUM: "a|b|c"; NULL otherwise */
  const char *unit;    /* "m/s", "" when dimensionless */
  const char *description;
} talus_param_info;

/* Number of declared keys, and the i-th declaration (NULL if out of range). */
int talus_param_count(void);
const talus_param_info *talus_param_at(int index);

/* Creates a parameter set holding every default. *out owned by caller. */
talus_status talus_params_create(talus_params **out);
/* Frees a parameter set; NULL is a no-op. */
void talus_params_free(talus_params *params);
/* Sets "section.key" from text. Unknown keys are TALUS_ERR_PARAM (the
 * message suggests the nearest key); bad values TALUS_ERR_RANGE. */
talus_status talus_params_set(talus_params *params, const char *key, const char *value);
/* Loads an INI file over the current values (same errors, with line
 * numbers). A path with no '/' that names no file loads the built-in preset
 * of that name ("rivers-rain" or "rivers-rain.ini": configs/ in the binary);
 * neither is TALUS_ERR_IO, the message listing the presets. */
talus_status talus_params_load(talus_params *params, const char *path);
/* Reads a value as a double (ENUM gives the choice index). */
talus_status talus_params_get(const talus_params *params, const char *key, double *out);

#ifdef __cplusplus
}
#endif
#endif /* TALUS_PARAMS_H */
