/*
 * domain.h — the internals of a talus_domain (include/talus.h), shared by
 * the application calls in app/. A domain is one terrain held in memory as
 * one tile covering the whole grid (H = 0), its kernel context, and its
 * run accounting.
 */
#ifndef TALUS_APP_DOMAIN_H
#define TALUS_APP_DOMAIN_H

#include "io/config/config.h"
#include "talus.h"
#include "tiler/tiler.h"

struct talus_domain {
  talus_kctx ctx;                  /* parameters, domain size, global step */
  talus_tile *tile;                /* the whole grid; owned */
  talus_run_stats stats;           /* flows (heights), stage times, cell-steps */
  double cell_area;                /* l_c² [m²] */
  double datum;                    /* bedrock volume is measured above this height [m] */
  double initial[TALUS_MAT_COUNT]; /* volumes [m³] at the first run */
  int started;                     /* initial[] taken */
  double run_seconds;              /* wall time inside talus_domain_run */
};

/* Volumes [m³] of each material currently held by the domain. */
void talus_domain_volumes(const talus_domain *d, double out[TALUS_MAT_COUNT]);

/* Wraps an existing whole-grid tile (ownership passes to the domain, also
 * on failure) into a domain with parameters p (NULL = defaults). */
talus_status talus_domain_wrap(talus_tile *tile, double cell_size, const talus_params *p,
                               talus_domain **out);

/* The backend `device` asks for (talus_domain_set_device's rule), to
 * *backend, and "cpu" or the GPU's name to name[len] (NULL allowed). When
 * AUTO falls back to the CPU, talus_last_error() keeps the GPU's reason. */
talus_status talus_backend_choose(talus_device device, int32_t *backend, char *name, size_t len);
/* talus_backend_choose for a command (--device): auto takes a usable GPU,
 * else says why in one line (when this build has CUDA) and takes the CPU;
 * cuda without one fails with the driver's reason. Names the GPU it takes;
 * clears the fallback's error. */
talus_status talus_backend_choose_reported(talus_device device, int32_t *backend);

#endif /* TALUS_APP_DOMAIN_H */
