/*
 * scene_fixture.h — builds a domain from a scene and a preset for the
 * integration tests, and compares domains byte for byte.
 */
#ifndef TALUS_TEST_SCENE_FIXTURE_H
#define TALUS_TEST_SCENE_FIXTURE_H

#include "app/domain.h"
#include "check.h"
#include "app/scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loads configs/<preset>.ini (NULL = defaults) and applies `sets`
 * ("key=value", NULL-terminated, may be NULL). Returns NULL on failure. */
static inline talus_params *fixture_params(const char *preset, const char *const *sets) {
  talus_params *p = NULL;
  if (talus_params_create(&p)) return NULL;
  if (preset) {
    char path[1024];
    const char *src = getenv("TALUS_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/configs/%s.ini", src ? src : ".", preset);
    if (talus_params_load(p, path)) {
      fprintf(stderr, "fixture: %s\n", talus_last_error());
      talus_params_free(p);
      return NULL;
    }
  }
  for (; sets && *sets; sets++) {
    char key[256];
    const char *eq = strchr(*sets, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - *sets), *sets);
    if (talus_params_set(p, key, eq + 1)) {
      fprintf(stderr, "fixture: %s\n", talus_last_error());
      talus_params_free(p);
      return NULL;
    }
  }
  return p;
}

/* Cells of t's buffer holding more than one column (overhangs, caves,
 * arches, bridges). */
static inline int multi_column_cells(const talus_tile *t) {
  int n = 0;
  for (int y = 0; y < t->buf.h; y++)
    for (int x = 0; x < t->buf.w; x++)
      n += t->count[talus_idx(t, x, y)] > 1;
  return n;
}

/* A domain holding scene `scene` at n² cells with preset parameters. */
static inline talus_domain *fixture_domain(const char *scene, int n, const char *preset,
                                           const char *const *sets) {
  talus_params *p = fixture_params(preset, sets);
  if (!p) return NULL;
  talus_kparams k;
  talus_tile *t = NULL;
  talus_domain *d = NULL;
  double cell = 0;
  if (talus_params_to_kparams(p, 0.0, &k) || talus_scene_build(scene, n, k.nz, 7, &t, &cell) ||
      talus_domain_wrap(t, cell, p, &d))
    fprintf(stderr, "fixture: %s\n", talus_last_error());
  talus_params_free(p);
  return d;
}

/* 1 when every persistent field of every live column is bitwise equal. */
static inline int fixture_same_state(const talus_domain *a, const talus_domain *b) {
  const talus_tile *s = a->tile, *t = b->tile;
  if (s->buf.w != t->buf.w || s->buf.h != t->buf.h || a->ctx.step != b->ctx.step) return 0;
  for (int y = 0; y < s->buf.h; y++)
    for (int x = 0; x < s->buf.w; x++) {
      size_t i = talus_idx(s, x, y), j = talus_idx(t, x, y);
      if (s->count[i] != t->count[j]) return 0;
      for (int k = 0; k < s->count[i]; k++) {
        float *fs[7] = {s->B, s->s, s->w, s->C, s->r, s->D, s->p};
        float *ft[7] = {t->B, t->s, t->w, t->C, t->r, t->D, t->p};
        for (int f = 0; f < 7; f++)
          if (memcmp(&fs[f][talus_col(s, i, k)], &ft[f][talus_col(t, j, k)], 4)) return 0;
        for (int d = 0; d < 4; d++)
          if (memcmp(&s->f[talus_dcol(s, i, k, d)], &t->f[talus_dcol(t, j, k, d)], 4)) return 0;
      }
      if (!s->fd != !t->fd) return 0;
      for (int q = 0; s->fd && q < 4; q++) /* heightfield.neighbours = 8 */
        if (memcmp(&s->fd[q * s->plane + i], &t->fd[q * t->plane + j], 4)) return 0;
    }
  return !memcmp(a->stats.flows, b->stats.flows, sizeof a->stats.flows);
}

/* The rivers-rain ledger bounds (issue 2): after a run with rain and
 * erosion, the unexplained residual is within 1e-5 of the material and the
 * water's within 1e-3 of the water added. Prints the figures under `label`
 * and returns the material [m³] (for further checks). */
static inline double fixture_check_ledger(const talus_domain *d, const char *label) {
  talus_ledger_summary L;
  talus_domain_ledger(d, &L);
  double material = 0.0;
  for (int m = 0; m < TALUS_MAT_COUNT; m++)
    material += L.initial[m];
  double added = talus_domain_flow(d, TALUS_FLOW_RAIN) + talus_domain_flow(d, TALUS_FLOW_SOURCE);
  printf("%s: material %.6g m3, water added %.6g m3, residual %.3g m3 (water %.3g)\n", label,
         material, added, L.total_residual, L.residual[TALUS_MAT_WATER]);
  CHECK(added > 0.0, "%s: rain fell", label);
  CHECK(talus_domain_flow(d, TALUS_FLOW_DISSOLVE) > 0.0, "%s: sand was dissolved", label);
  CHECK(fabs(L.total_residual) <= 1e-5 * material, "%s: residual %.3g vs material %.3g", label,
        L.total_residual, material);
  CHECK(fabs(L.residual[TALUS_MAT_WATER]) <= 1e-3 * added, "%s: water residual %.3g vs added %.3g",
        label, L.residual[TALUS_MAT_WATER], added);
  return material;
}

#endif
