/*
 * config.h — the parameter system: the one declared table of configuration
 * keys ("section.key", each with type, range, default, unit, description),
 * the parameter set that holds their values, INI loading and the writers
 * used by `talus params` and the run report.
 *
 * Design notes
 * ------------
 * - The table in params.c is the authority for keys and ranges; the
 *   defaults themselves come from talus_kparams_defaults() (kernels/state.c)
 *   and the table repeats them for documentation. test_config checks that
 *   the two agree, so neither can drift silently.
 * - A parameter set is plain data (no pointers): struct assignment copies it.
 *   It remembers which keys were set explicitly, so presets can be layered
 *   (talus_params_overlay) and callers can tell a user's choice from a default.
 * - Sources: each of the TALUS_MAX_SOURCES sections source1..source4 keeps its
 *   own slot. A source is active when strength > 0 or radius > 0;
 *   talus_params_to_kparams packs the active ones to the front of
 *   talus_kparams.sources (in section order) and sets num_sources to their
 *   count, so kernels loop over sources[0 .. num_sources).
 * - TALUS_PARAM_MAX leaves room for the heightfield/thermal keys of a later
 *   issue: adding a section is adding rows to the table, nothing else.
 */
#ifndef TALUS_IO_CONFIG_H
#define TALUS_IO_CONFIG_H

#include "talus_params.h"
#include "kernels/state.h"
#include "io/json.h"

#include <stdio.h>

/* Capacity of the explicitly-set mask; the table must stay below it. */
#define TALUS_PARAM_MAX 160

struct talus_params {
  talus_kparams k;                    /* physics values; derived fields unused here */
  double z_scale;                     /* input.z_scale: factor applied to input heights */
  double cell_size;                   /* input.cell_size: override [m], 0 = from the raster */
  unsigned char set[TALUS_PARAM_MAX]; /* 1 where key i was set explicitly */
};

/* Loads the built-in copy of configs/<name>.ini (every preset in configs/
 * is built in, so a bare `talus erode dem.tif` needs no file), all or
 * nothing as talus_params_load. TALUS_ERR_ARGUMENT for an unknown name.
 * talus_params_load falls back to these when its path names no file. */
talus_status talus_params_load_builtin(talus_params *params, const char *name);
/* The built-in presets, in name order: how many, the name of the i-th
 * ("rivers-rain"; NULL out of range), and its one-line summary (the
 * preset's "; summary:" comment; empty when it has none) into out. */
int talus_preset_count(void);
const char *talus_preset_name(int i);
void talus_preset_summary(int i, char *out, size_t size);

/* Index of a declared key, or -1 when unknown (no error is recorded). */
int talus_param_find(const char *key);

/* Copies a parameter set into a new one; *out owned by the caller. */
talus_status talus_params_copy(const talus_params *src, talus_params **out);

/* 1 when `key` was set explicitly (by set/load/overlay), 0 when it holds its
 * default or is unknown. */
int talus_params_is_set(const talus_params *p, const char *key);

/* Copies into dst every key that src set explicitly, marking it set in dst:
 * layering a preset's explicit choices over another set. */
void talus_params_overlay(talus_params *dst, const talus_params *src);

/* Fills *out with the physics parameters on cells of `cell` metres: copies
 * p->k, takes the cell size from `cell` when > 0, else the input.cell_size
 * override when > 0, else the default; applies water.finest_cell at that
 * cell (talus_kparams_finest_water: dt becomes the step's), packs the
 * active sources and counts them into num_sources, checks cross-key
 * consistency and calls talus_kparams_derive. Callers that know the grid
 * pass its cell here rather than setting it afterwards, or finest_cell
 * would read the wrong grid. TALUS_ERR_RANGE names the keys that disagree. */
talus_status talus_params_to_kparams(const talus_params *p, double cell, talus_kparams *out);

/* Prints every key grouped by section: type, default, range, unit and
 * description (the body of `talus params`). section_filter NULL or "" prints
 * all; otherwise only that section, or only that one "section.key".
 * Returns the number of keys printed (0: the filter matched nothing). */
int talus_params_print_table(FILE *to, const char *section_filter);

/* All current values as a new JSON object keyed "section.key" (reals as
 * numbers with just enough digits to read back, ints as integers, bools as
 * true/false, enums as strings), in table order; the caller owns it (free
 * with talus_json_free). NULL, with the error recorded, when p is NULL or
 * memory runs out. */
talus_json *talus_params_json(const talus_params *p);

/* Writes talus_params_json(p) to `to`. indent <= 0 writes one line;
 * otherwise each entry on its own line prefixed by `indent` spaces (rounded
 * up to even) and the closing brace by indent-2 spaces (an object nested at
 * depth d of a 2-space document passes indent = 2(d+1)). No trailing
 * newline. TALUS_ERR_IO when the stream reports an error. */
talus_status talus_params_write_json(const talus_params *p, FILE *to, int indent);

/* Writes all current values as an INI file that talus_params_load reads back
 * to identical values (each key commented with unit and range).
 * The header line names `version` (the caller's talus_version(); NULL:
 * TALUS_VERSION_STRING). TALUS_ERR_IO when the stream reports an error. */
talus_status talus_params_print_ini(const talus_params *p, const char *version, FILE *to);

/* talus_params_print_ini's text as a new string (the header naming
 * `version`), or NULL with TALUS_ERR_NOMEM recorded; free() it. */
char *talus_params_ini_text(const talus_params *p, const char *version);
/* Loads INI text (what talus_params_ini_text wrote, or a file's bytes) over
 * the current values, all or nothing as talus_params_load; `name` names its
 * source in messages. */
talus_status talus_params_load_text(talus_params *params, const char *text, const char *name);

#endif /* TALUS_IO_CONFIG_H */
