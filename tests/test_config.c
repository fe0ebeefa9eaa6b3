/*
 * test_config.c — the parameter table and parameter sets: declared defaults
 * agree with talus_kparams_defaults, typed parsing and range checks, error
 * messages (suggestions, ranges, file:line), INI loading, every preset in
 * configs/ loads, and the INI writer round-trips.
 */
#include "check.h"
#include "io/config/config.h"

#include <math.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sets key=value and returns the status (message in talus_last_error). */
static talus_status set(talus_params *p, const char *key, const char *value) {
  talus_error_clear();
  return talus_params_set(p, key, value);
}

static double get(const talus_params *p, const char *key) {
  double v = NAN;
  talus_status st = talus_params_get(p, key, &v);
  CHECK(st == TALUS_OK, "get %s: %s", key, talus_last_error());
  return v;
}

static int has(const char *text) {
  return strstr(talus_last_error(), text) != NULL;
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_ini(const char *text) {
  static char path[64];
  strcpy(path, "/tmp/talus_test_config_XXXXXX");
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) return NULL;
  fputs(text, f);
  fclose(f);
  return path;
}

/* Every declared default equals what a fresh set holds, which comes from
 * talus_kparams_defaults; and the derived kparams equal the kernel defaults. */
static void test_defaults(void) {
  talus_params *p = NULL;
  CHECK(talus_params_create(&p) == TALUS_OK, "create");
  for (int i = 0; i < talus_param_count(); i++) {
    const talus_param_info *info = talus_param_at(i);
    double v = get(p, info->key);
    CHECK((float)v == (float)info->def, "%s: declared default %g, holds %g", info->key, info->def,
          v);
    CHECK(!talus_params_is_set(p, info->key), "%s marked set in a fresh set", info->key);
  }
  talus_kparams a, b;
  talus_kparams_defaults(&b);
  CHECK(talus_kparams_derive(&b) == TALUS_OK, "derive defaults");
  CHECK(talus_params_to_kparams(p, 0.0, &a) == TALUS_OK, "to_kparams: %s", talus_last_error());
  CHECK(memcmp(&a, &b, sizeof a) == 0, "kparams from default params differ from the defaults");
  CHECK(a.num_sources == 0, "no source active by default");
  CHECK_CLOSE(a.tan_dry, tan(30.0 * 3.14159265358979 / 180.0), 1e-6, "derived tan of 30 deg");
  talus_params_free(p);
}

/* Table sanity: keys unique and "section.key", defaults within their own
 * range, sections contiguous, enum choices well formed. */
static void test_table(void) {
  int n = talus_param_count();
  CHECK(n > 40 && n <= TALUS_PARAM_MAX, "%d keys", n);
  CHECK(talus_param_at(-1) == NULL && talus_param_at(n) == NULL, "out-of-range index gives NULL");
  for (int i = 0; i < n; i++) {
    const talus_param_info *a = talus_param_at(i);
    const char *dot = strchr(a->key, '.');
    CHECK(dot && dot > a->key && dot[1] && !strchr(dot + 1, '.'), "key '%s' is section.key",
          a->key);
    CHECK(a->min <= a->def && a->def <= a->max, "%s: default %g outside [%g, %g]", a->key, a->def,
          a->min, a->max);
    CHECK(a->description && strlen(a->description) > 10, "%s has a description", a->key);
    CHECK(a->unit != NULL, "%s has a unit string", a->key);
    CHECK((a->type == TALUS_PARAM_ENUM) == (a->choices != NULL), "%s: choices iff enum", a->key);
    CHECK(talus_param_find(a->key) == i, "%s found at its own index", a->key);
    for (int j = 0; j < i; j++) {
      const talus_param_info *b = talus_param_at(j);
      CHECK(strcmp(a->key, b->key) != 0, "duplicate key %s", a->key);
      /* contiguous: a section seen before must be the previous key's section */
      size_t la = (size_t)(dot - a->key);
      if (!strncmp(a->key, b->key, la + 1) && j < i - 1) {
        const char *prev = talus_param_at(i - 1)->key;
        CHECK(!strncmp(prev, a->key, la + 1), "section of %s is not contiguous", a->key);
      }
    }
  }
}

/* Set/get round trip for each type, including aliases and whitespace. */
static void test_set_get(void) {
  talus_params *p = NULL;
  talus_params_create(&p);
  CHECK(set(p, "water.rain", "5e-2") == TALUS_OK, "real exponent: %s", talus_last_error());
  CHECK((float)get(p, "water.rain") == 0.05f, "water.rain = 5e-2");
  CHECK(set(p, "water.rain", "  0.025 ") == TALUS_OK, "real with blanks");
  CHECK((float)get(p, "water.rain") == 0.025f, "water.rain = 0.025");
  CHECK(talus_params_is_set(p, "water.rain"), "water.rain marked set");
  CHECK(set(p, "simulation.layers", "12") == TALUS_OK, "int");
  CHECK(get(p, "simulation.layers") == 12.0 && p->k.nz == 12, "layers 12 reaches k.nz");
  CHECK(set(p, "simulation.seed", "4294967295") == TALUS_OK, "seed max: %s", talus_last_error());
  CHECK(p->k.seed == 4294967295u && get(p, "simulation.seed") == 4294967295.0, "seed stored");
  const char *truths[] = {"true", "1", "yes", "on", "TRUE", "On"};
  const char *lies[] = {"false", "0", "no", "off", "False", "OFF"};
  for (int i = 0; i < 6; i++) {
    CHECK(set(p, "water.outflow_border", truths[i]) == TALUS_OK && p->k.outflow_water == 1,
          "bool '%s'", truths[i]);
    CHECK(set(p, "water.outflow_border", lies[i]) == TALUS_OK && p->k.outflow_water == 0,
          "bool '%s'", lies[i]);
  }
  CHECK(set(p, "simulation.model", "heightfield") == TALUS_OK, "enum");
  CHECK(get(p, "simulation.model") == 1.0 && p->k.model == TALUS_MODEL_HEIGHTFIELD, "enum index");
  CHECK(set(p, "input.nodata", "Wall") == TALUS_OK && p->k.nodata_policy == TALUS_NODATA_WALL,
        "enum any case");
  CHECK(set(p, "input.cell_size", "30") == TALUS_OK && p->cell_size == 30.0, "input.cell_size");
  CHECK(set(p, "input.z_scale", "0.3048") == TALUS_OK && p->z_scale == 0.3048, "z_scale double");
  CHECK(set(p, "source3.flux_l", "2.5") == TALUS_OK && p->k.sources[2].flux[2] == 2.5f,
        "source3.flux_l lands in sources[2].flux[L]");
  talus_params_free(p);
}

/* Bad values: unknown keys with suggestions, ranges, bools, NaN, garbage. */
static void test_errors(void) {
  talus_params *p = NULL;
  talus_params_create(&p);
  CHECK(set(p, "water.rian", "1") == TALUS_ERR_PARAM, "unknown key is TALUS_ERR_PARAM");
  CHECK(has("unknown key 'water.rian'; did you mean 'water.rain'?"), "msg: %s", talus_last_error());
  CHECK(set(p, "erosion.split_size", "1") == TALUS_ERR_PARAM && has("'horizontal.split_size'"),
        "wrong section suggests the right one: %s", talus_last_error());
  CHECK(set(p, "rain", "1") == TALUS_ERR_PARAM && has("'water.rain'"), "missing section: %s",
        talus_last_error());
  CHECK(set(p, "zzzzzz.qqqqq", "1") == TALUS_ERR_PARAM && !has("did you mean"),
        "no silly suggestion: %s", talus_last_error());
  double v;
  CHECK(talus_params_get(p, "water.rian", &v) == TALUS_ERR_PARAM && has("did you mean"),
        "get of an unknown key");
  CHECK(set(p, "water.rain", "20") == TALUS_ERR_RANGE, "out of range");
  CHECK(has("water.rain") && has("[0, 10]") && has("m/s"), "range msg: %s", talus_last_error());
  CHECK(set(p, "simulation.layers", "17") == TALUS_ERR_RANGE && has("[1, 16]"), "layers 17: %s",
        talus_last_error());
  CHECK(set(p, "simulation.layers", "8.5") == TALUS_ERR_RANGE, "non-integer int");
  CHECK(set(p, "simulation.seed", "-1") == TALUS_ERR_RANGE, "negative seed");
  CHECK(set(p, "water.outflow_border", "maybe") == TALUS_ERR_RANGE && has("boolean"),
        "bad bool: %s", talus_last_error());
  CHECK(set(p, "water.rain", "nan") == TALUS_ERR_RANGE && has("finite"), "NaN: %s",
        talus_last_error());
  CHECK(set(p, "water.rain", "inf") == TALUS_ERR_RANGE, "inf rejected");
  CHECK(set(p, "water.rain", "1e999") == TALUS_ERR_RANGE, "overflow rejected");
  CHECK(set(p, "water.rain", "0.05m") == TALUS_ERR_RANGE && has("trailing"), "trailing: %s",
        talus_last_error());
  CHECK(set(p, "water.rain", "0x1p-4") == TALUS_ERR_RANGE, "hex rejected");
  CHECK(set(p, "water.rain", "") == TALUS_ERR_RANGE, "empty value");
  CHECK(set(p, "simulation.model", "voxel") == TALUS_ERR_RANGE && has("layered|heightfield"),
        "bad enum: %s", talus_last_error());
  CHECK((float)get(p, "water.rain") == 0.07f && !talus_params_is_set(p, "water.rain"),
        "failed sets leave the value and the set flag alone");
  /* cross-key consistency is checked when the kernels' parameters are made */
  talus_kparams k;
  set(p, "erosion.min_scale", "2");
  CHECK(talus_params_to_kparams(p, 0.0, &k) == TALUS_ERR_RANGE && has("erosion.max_scale"),
        "min_scale > max_scale: %s", talus_last_error());
  talus_params_free(p);
}

/* INI: comments, blanks, inline comments, full keys before any section,
 * last wins; errors carry file:line; failed loads change nothing. */
static void test_ini(void) {
  talus_params *p = NULL;
  talus_params_create(&p);
  const char *path = temp_ini("\xEF\xBB\xBF; a preset\n"
                              "# another comment\n"
                              "simulation.dt = 0.05\n"
                              "\n"
                              "[water]\r\n"
                              "  rain = 0.5   ; inline\n"
                              "rain=0.01 # last wins\n"
                              "outflow_border = yes\n"
                              "[ source2 ]\n"
                              "strength = 0.3\n"
                              "radius = 4\n"
                              "x = 100\n");
  CHECK(path && talus_params_load(p, path) == TALUS_OK, "load: %s", talus_last_error());
  CHECK((float)get(p, "simulation.dt") == 0.05f, "top-level full key");
  CHECK((float)get(p, "water.rain") == 0.01f, "last wins");
  CHECK(get(p, "water.outflow_border") == 1.0, "bool in INI");
  talus_kparams k;
  CHECK(talus_params_to_kparams(p, 0.0, &k) == TALUS_OK, "to_kparams: %s", talus_last_error());
  CHECK(k.num_sources == 1 && k.sources[0].strength == 0.3f && k.sources[0].x == 100.0f,
        "source2 is the one active source, packed first");
  if (path) unlink(path);

  path = temp_ini("[water]\nrain = 0.02\n\nevaporation = 0.5\nrian = 3\n");
  CHECK(talus_params_load(p, path) == TALUS_ERR_PARAM, "unknown key in INI");
  char where[128];
  snprintf(where, sizeof where, "%s:5:", path);
  CHECK(has(where) && has("did you mean 'water.rain'"), "file:line: %s", talus_last_error());
  CHECK((float)get(p, "water.rain") == 0.01f, "a failed load changes nothing");
  unlink(path);

  path = temp_ini("[water]\nrain = 0.02\n[watr]\n");
  CHECK(talus_params_load(p, path) == TALUS_ERR_PARAM && has(":3:") && has("[water]"),
        "unknown section: %s", talus_last_error());
  unlink(path);
  path = temp_ini("[sand]\ntalus_dry = 95\n");
  CHECK(talus_params_load(p, path) == TALUS_ERR_RANGE && has(":2:") && has("[0, 89] deg"),
        "range in INI: %s", talus_last_error());
  unlink(path);
  path = temp_ini("[sand]\ntalus_dry 30\n");
  CHECK(talus_params_load(p, path) == TALUS_ERR_FORMAT && has(":2:"), "no '=': %s",
        talus_last_error());
  unlink(path);
  CHECK(talus_params_load(p, "/nonexistent/talus.ini") == TALUS_ERR_IO &&
            has("/nonexistent/talus.ini"),
        "missing file: %s", talus_last_error());
  talus_params_free(p);
}

/* Every field of two sets, compared through the table. */
static int same_values(const talus_params *a, const talus_params *b) {
  int same = 1;
  for (int i = 0; i < talus_param_count(); i++) {
    const char *key = talus_param_at(i)->key;
    double va = NAN, vb = NAN;
    talus_params_get(a, key, &va);
    talus_params_get(b, key, &vb);
    if (va != vb) {
      fprintf(stderr, "  %s: %.17g vs %.17g\n", key, va, vb);
      same = 0;
    }
  }
  return same;
}

/* print_ini output loads back to identical values, for odd values too. */
static void test_ini_round_trip(void) {
  talus_params *p = NULL, *q = NULL;
  talus_params_create(&p);
  talus_params_create(&q);
  set(p, "water.rain", "0.0123456789");
  set(p, "simulation.model", "heightfield");
  set(p, "input.z_scale", "0.30480000000000001");
  set(p, "simulation.seed", "3000000000");
  set(p, "support.bedrock_support", "1e11");
  set(p, "source4.y", "-12.75");
  set(p, "sand.slippage", "off");
  char path[] = "/tmp/talus_test_config_rt_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  CHECK(f && talus_params_print_ini(p, NULL, f) == TALUS_OK, "print_ini");
  if (f) fclose(f);
  CHECK(talus_params_load(q, path) == TALUS_OK, "reload: %s", talus_last_error());
  CHECK(same_values(p, q), "print_ini round trip");
  for (int i = 0; i < talus_param_count(); i++)
    CHECK(talus_params_is_set(q, talus_param_at(i)->key), "reloaded key marked set");
  unlink(path);
  talus_params_free(p);
  talus_params_free(q);
}

/* Overlay copies exactly the explicitly set keys. */
static void test_overlay(void) {
  talus_params *base = NULL, *top = NULL;
  talus_params_create(&base);
  talus_params_create(&top);
  set(base, "water.rain", "0.3");
  set(base, "water.evaporation", "0.2");
  set(top, "water.rain", "0.01");
  talus_params_overlay(base, top);
  CHECK((float)get(base, "water.rain") == 0.01f, "overlay takes the explicit key");
  CHECK((float)get(base, "water.evaporation") == 0.2f, "overlay keeps what top left default");
  talus_params *copy = NULL;
  CHECK(talus_params_copy(base, &copy) == TALUS_OK && same_values(base, copy), "copy");
  talus_params_free(copy);
  talus_params_free(base);
  talus_params_free(top);
}

/* JSON: one entry per key, values in the right form. */
static void test_json(void) {
  talus_params *p = NULL;
  talus_params_create(&p);
  set(p, "water.rain", "0.01");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f && talus_params_write_json(p, f, 4) == TALUS_OK, "write_json");
  if (f) fclose(f);
  if (buf) {
    CHECK(buf[0] == '{' && buf[len - 1] == '}', "an object");
    CHECK(strstr(buf, "\n    \"water.rain\": 0.01,\n") != NULL, "real shortest form");
    CHECK(strstr(buf, "\"simulation.model\": \"layered\"") != NULL, "enum as string");
    CHECK(strstr(buf, "\"water.outflow_border\": false") != NULL, "bool");
    int entries = 0;
    for (const char *c = buf; (c = strstr(c, "\": ")); c++)
      entries++;
    CHECK(entries == talus_param_count(), "%d entries for %d keys", entries, talus_param_count());
  }
  free(buf);
  talus_params_free(p);
}

/* print_table lists every key, and filters by section or key. */
static void test_table_print(void) {
  FILE *null = fopen("/dev/null", "w");
  CHECK(talus_params_print_table(null, NULL) == talus_param_count(), "all keys");
  CHECK(talus_params_print_table(null, "water") == 10, "[water] has 10 keys");
  CHECK(talus_params_print_table(null, "water.rain") == 1, "one key");
  CHECK(talus_params_print_table(null, "nope") == 0, "unknown section prints nothing");
  fclose(null);
}

/* Every preset in configs/ loads and yields valid kernel parameters. */
static void test_presets(void) {
  const char *src = getenv("TALUS_SOURCE_DIR");
  if (!src) {
    printf("TALUS_SOURCE_DIR unset: presets not checked\n");
    return;
  }
  char dir[1024], path[2048];
  snprintf(dir, sizeof dir, "%s/configs", src);
  DIR *d = opendir(dir);
  CHECK(d != NULL, "open %s", dir);
  int found = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".ini")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    talus_params *p = NULL;
    talus_kparams k;
    talus_params_create(&p);
    CHECK(talus_params_load(p, path) == TALUS_OK, "%s: %s", e->d_name, talus_last_error());
    CHECK(talus_params_to_kparams(p, 0.0, &k) == TALUS_OK, "%s: %s", e->d_name, talus_last_error());
    talus_params_free(p);
    found++;
  }
  if (d) closedir(d);
  CHECK(found >= 9, "%d presets found", found);
}

/* Loads configs/<name> into a fresh set and its kernel parameters; 0 on failure. */
static int load_preset(const char *name, talus_params **p, talus_kparams *k) {
  const char *src = getenv("TALUS_SOURCE_DIR");
  char path[2048];
  snprintf(path, sizeof path, "%s/configs/%s", src ? src : ".", name);
  talus_params_create(p);
  return talus_params_load(*p, path) == TALUS_OK && talus_params_to_kparams(*p, 0.0, k) == TALUS_OK;
}

/* The presets say what their comments promise. */
static void test_preset_values(void) {
  if (!getenv("TALUS_SOURCE_DIR")) return;
  talus_params *p = NULL;
  talus_kparams k;
  /* RiversRain: the reference's scene values, but for the heavy rain and
   * dry-out its comment documents (rain 0.05 for 1500 steps, evaporation
   * 0.02, submerged sand at 5 degrees) */
  CHECK(load_preset("rivers-rain.ini", &p, &k), "rivers-rain: %s", talus_last_error());
  CHECK(k.dt == 0.05f && k.deposition == 0.1f && k.bedrock_dissolve == 0.02f &&
            k.outflow_water == 1 && k.nz == 4,
        "rivers-rain holds the reference scene values");
  CHECK(k.rain == 0.05f && k.rain_steps == 1500 && k.evaporation == 0.02f &&
            fabsf(k.tan_wet - tanf(5.0f * 0.017453292519943295f)) < 1e-6f,
        "rivers-rain: heavy rain for 1500 steps, then the dry-out");
  talus_params_free(p);
  /* ChasmSource: one source, inside the chasm x in (64,240), y in (120,136) */
  CHECK(load_preset("chasm-source.ini", &p, &k), "chasm-source: %s", talus_last_error());
  CHECK(k.num_sources == 1 && k.rain == 0.0f, "chasm-source: one source, no rain");
  CHECK(k.sources[0].x - k.sources[0].radius > 64.0f &&
            k.sources[0].x + k.sources[0].radius < 240.0f &&
            k.sources[0].y - k.sources[0].radius > 120.0f &&
            k.sources[0].y + k.sources[0].radius < 136.0f,
        "chasm-source: the source disc lies inside the chasm");
  talus_params_free(p);
  CHECK(load_preset("rivers-source.ini", &p, &k), "rivers-source: %s", talus_last_error());
  CHECK(k.num_sources == 4 && k.rain == 0.0f, "rivers-source: four sources, no rain");
  talus_params_free(p);
  /* DEM default: carves (stream power after a spin-up), thin flow forms
   * (the subtracted evaporation stays below the rain), water leaves the
   * window, and the time step is inside the pipes' bound sqrt(l_c / 2g) down
   * to 10 m cells */
  CHECK(load_preset("dem-default.ini", &p, &k), "dem-default: %s", talus_last_error());
  CHECK(k.erosion_law == TALUS_LAW_STREAM_POWER && k.erosion_spinup > 0, "dem-default carves");
  CHECK(k.evaporation < 0.5f * k.rain && k.outflow_water && k.nodata_policy == TALUS_NODATA_OUTFLOW,
        "dem-default: thin flow forms and drains out");
  CHECK(k.dt < sqrt(10.0 / (2.0 * k.gravity)), "dem-default dt %g stable at 10 m cells", k.dt);
  CHECK(p->cell_size == 0.0, "dem-default takes the cell size from the DEM");
  talus_params_free(p);
  /* Scenes needing two columns per cell get them */
  const char *two[] = {"bridges.ini", "cave.ini"};
  for (int i = 0; i < 2; i++) {
    CHECK(load_preset(two[i], &p, &k) && k.nz >= 2, "%s: layers >= 2", two[i]);
    talus_params_free(p);
  }
}

/* water.finest_cell F: on cells finer than F the layered model's water is
 * pinned to F and dt shrinks with the cell (exactly half on 0.5 m cells
 * under 1 m: the recipe `water.reference_cell=1 simulation.dt=0.025`,
 * bit for bit); at F and coarser, with water.reference_cell set, or on the
 * heightfield model, the parameters are as without it. Applied at the cell
 * given to to_kparams, once: deriving again changes nothing. */
static void test_finest_cell(void) {
  talus_params *p = NULL;
  talus_kparams k, plain;
  CHECK(talus_params_create(&p) == TALUS_OK, "create");
  CHECK(talus_params_set(p, "water.finest_cell", "1") == TALUS_OK &&
            talus_params_set(p, "simulation.dt", "0.05") == TALUS_OK &&
            talus_params_set(p, "water.rain_steps", "1500") == TALUS_OK,
        "set finest_cell, dt and rain_steps");
  CHECK(talus_params_to_kparams(p, 0.5, &k) == TALUS_OK, "0.5 m: %s", talus_last_error());
  CHECK(k.dt == 0.025f && k.water_reference_cell == 1.0f && k.pipe_gain_length == 1.0f,
        "0.5 m cells: dt %g (0.025), pinned to %g m (1), gain length %g", (double)k.dt,
        (double)k.water_reference_cell, (double)k.pipe_gain_length);
  CHECK(k.thermal_dt == k.dt, "the derived steps read the shortened dt (%g)", (double)k.thermal_dt);
  CHECK(k.rain_steps == 3000, "the rain lasts the same seconds: %d steps (3000)", k.rain_steps);
  CHECK(talus_kparams_derive(&k) == TALUS_OK && k.dt == 0.025f, "deriving again keeps dt %g",
        (double)k.dt);
  talus_kparams_finest_water(&k);
  CHECK(k.dt == 0.025f, "applying it again keeps dt %g", (double)k.dt);
  CHECK(talus_params_to_kparams(p, 0.25, &k) == TALUS_OK && k.dt == 0.0125f,
        "0.25 m cells: dt %g (0.0125)", (double)k.dt);
  for (int i = 0; i < 2; i++) { /* at and above F: as without the key */
    double cell = i ? 2.0 : 1.0;
    CHECK(talus_params_to_kparams(p, cell, &k) == TALUS_OK && k.dt == 0.05f &&
              k.water_reference_cell == 0.0f && k.pipe_gain_length == (float)cell &&
              k.rain_steps == 1500,
          "%g m cells: dt %g, pin %g (as without finest_cell)", cell, (double)k.dt,
          (double)k.water_reference_cell);
  }
  CHECK(talus_params_set(p, "water.reference_cell", "2") == TALUS_OK, "set reference_cell");
  CHECK(talus_params_to_kparams(p, 0.5, &k) == TALUS_OK && k.dt == 0.05f &&
            k.water_reference_cell == 2.0f,
        "reference_cell set: it wins, dt %g as given", (double)k.dt);
  CHECK(talus_params_set(p, "water.reference_cell", "0") == TALUS_OK &&
            talus_params_set(p, "simulation.model", "heightfield") == TALUS_OK,
        "heightfield");
  CHECK(talus_params_to_kparams(p, 0.5, &k) == TALUS_OK && k.dt == 0.05f,
        "heightfield model: dt %g as given (its pipes have their own keys)", (double)k.dt);
  CHECK(talus_params_set(p, "water.finest_cell", "0") == TALUS_OK &&
            talus_params_to_kparams(p, 0.5, &plain) == TALUS_OK &&
            talus_params_set(p, "water.finest_cell", "1") == TALUS_OK &&
            talus_params_to_kparams(p, 0.5, &k) == TALUS_OK && k.dt == plain.dt,
        "heightfield: the same dt with and without finest_cell");
  talus_params_free(p);
}

int main(void) {
  test_defaults();
  test_finest_cell();
  test_table();
  test_set_get();
  test_errors();
  test_ini();
  test_ini_round_trip();
  test_overlay();
  test_json();
  test_table_print();
  test_presets();
  test_preset_values();
  return check_report("test_config");
}
