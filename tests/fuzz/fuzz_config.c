/*
 * fuzz_config.c — the INI loader (talus_params_load) and single overrides
 * (talus_params_set) on arbitrary bytes. Invariants: a rejected file or
 * override is rejected with a parameter, range, format or I/O status and a
 * message, and leaves the parameter set exactly as it was (all or
 * nothing); an accepted set writes an INI (talus_params_print_ini) that
 * loads back to the same values; packing it for the kernels either works
 * or names the disagreeing keys (TALUS_ERR_RANGE).
 */
#include "fuzz.h"
#include "io/config/config.h"

#include <dirent.h>
#include <string.h>

#ifndef TALUS_FUZZ_CONFIGS
#define TALUS_FUZZ_CONFIGS "configs"
#endif

/* The set as INI text (malloc'd), the form in which two sets compare. */
static char *config_text(const talus_params *p) {
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  FUZZ_CHECK(f && talus_params_print_ini(p, NULL, f) == TALUS_OK, "print_ini failed");
  fclose(f);
  return text;
}

static void config_check_rejected(talus_status st, const char *before, const talus_params *p) {
  FUZZ_CHECK(st == TALUS_ERR_PARAM || st == TALUS_ERR_RANGE || st == TALUS_ERR_FORMAT ||
                 st == TALUS_ERR_IO || st == TALUS_ERR_ARGUMENT,
             "unexpected status %d", (int)st);
  FUZZ_CHECK(talus_last_error()[0], "rejected without a message");
  char *after = config_text(p);
  FUZZ_CHECK(!strcmp(before, after), "a rejected input changed the parameters");
  free(after);
}

/* An accepted set: its INI loads back to the same values. */
static void config_check_round_trip(const talus_params *p) {
  char *text = config_text(p), path[64], *again;
  talus_params *q = NULL;
  FUZZ_CHECK(talus_params_create(&q) == TALUS_OK, "create failed");
  int fd = fuzz_file_open(text, strlen(text), path, sizeof path);
  FUZZ_CHECK(talus_params_load(q, path) == TALUS_OK, "own INI rejected: %s", talus_last_error());
  fuzz_file_close(fd);
  again = config_text(q);
  FUZZ_CHECK(!strcmp(text, again), "the INI did not load back to the same values");
  talus_kparams k;
  talus_status st = talus_params_to_kparams(p, 0.0, &k);
  FUZZ_CHECK(st == TALUS_OK || st == TALUS_ERR_RANGE, "to_kparams: status %d", (int)st);
  free(again);
  free(text);
  talus_params_free(q);
}

/* The first line as one "key=value" override. */
static void config_fuzz_set(talus_params *p, const uint8_t *data, size_t size) {
  char line[512];
  size_t n = 0;
  while (n < size && n + 1 < sizeof line && data[n] != '\n')
    line[n] = (char)data[n], n++;
  line[n] = 0;
  char *eq = strchr(line, '=');
  if (!eq) return;
  *eq = 0;
  char *before = config_text(p);
  talus_error_clear();
  talus_status st = talus_params_set(p, line, eq + 1);
  if (st) config_check_rejected(st, before, p);
  free(before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  talus_params *p = NULL;
  char path[64];
  FUZZ_CHECK(talus_params_create(&p) == TALUS_OK, "create failed");
  char *before = config_text(p);
  int fd = fuzz_file_open(data, size, path, sizeof path);
  talus_error_clear();
  talus_status st = talus_params_load(p, path);
  fuzz_file_close(fd);
  if (st)
    config_check_rejected(st, before, p);
  else
    config_check_round_trip(p);
  config_fuzz_set(p, data, size);
  free(before);
  talus_params_free(p);
  return 0;
}

/* Seeds: every preset in configs/, and a few overrides. */
void fuzz_seeds(fuzz_add_fn add, void *user) {
  static const char *const lines[] = {"simulation.layers=4\n", "thermal.enable=true\n",
                                      "[hydraulic]\nrain = 0.01\n", "simulation.dt=1e-3\n"};
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
    add(lines[i], strlen(lines[i]), user);
  DIR *dir = opendir(TALUS_FUZZ_CONFIGS);
  for (struct dirent *e; dir && (e = readdir(dir));) {
    if (!strstr(e->d_name, ".ini")) continue;
    char path[4096], buf[65536];
    snprintf(path, sizeof path, "%s/%s", TALUS_FUZZ_CONFIGS, e->d_name);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    if (n) add(buf, n, user);
  }
  if (dir) closedir(dir);
}
