/*
 * bench_traffic.c — the bytes each stage moves per cell-step (bench.h has
 * the model). The counts follow the arrays each k_* body of kernels/ reads
 * and writes; keep them in step with the kernels when a stage changes.
 */
#include "bench.h"

#include <math.h>

/* Heightfield stages: one layer, so every array is per cell. */
static double hf_bytes(const talus_tile *t, talus_stage_id id) {
  double mask = t->mask ? 1.0 : 0.0, hard = t->hard ? 4.0 : 0.0, rain = t->rain ? 4.0 : 0.0;
  switch (id) {
  case TALUS_STAGE_HF_RAIN:
    return mask + rain + 8.0; /* w read and written */
  case TALUS_STAGE_HF_FLUX:
    return mask + 8.0 + 16.0 + 2.0 + 16.0; /* w B f[4] | nb8 f[4] */
  case TALUS_STAGE_HF_WATER:
    return mask + 2.0 + 16.0 + 8.0 + 16.0; /* nb8 f[4] B w | w vx vy C */
  case TALUS_STAGE_HF_ERODE:
    return mask + 16.0 + 12.0 + 2.0 * hard; /* C r B w H | B r w H */
  case TALUS_STAGE_HF_ADVECT:
    return mask + 2.0 + 12.0 + 4.0; /* nb8 vx vy r | sediment */
  case TALUS_STAGE_HF_SETTLE:
    return mask + 4.0 + 4.0; /* sediment | r */
  default:
    return 0.0;
  }
}

/* Thermal stages: 8 pipe values per cell written by thermal_out and read
 * by thermal_in; the surface is B (heightfield) or B + s of the top column. */
static double thermal_bytes(const talus_tile *t, const talus_kparams *P, talus_stage_id id) {
  double mask = t->mask ? 1.0 : 0.0, hard = t->hard ? 4.0 : 0.0;
  int hf = P->model == TALUS_MODEL_HEIGHTFIELD;
  double surface = hf ? 4.0 : 1.0 + 8.0; /* B, or count + B + s */
  if (id == TALUS_STAGE_THERMAL_OUT) return mask + surface + hard + 2.0 + 32.0;
  return mask + 2.0 + 32.0 + 2.0 * surface; /* nb8 pipes | surface read and written */
}

/* Layered stages: per-cell bytes plus per-column bytes times the mean
 * column count (support propagation touches columns above the first only,
 * and each half-sweep updates half the cells). */
static double layered_bytes(const talus_tile *t, talus_stage_id id, double m) {
  double cell = (t->mask ? 1.0 : 0.0) + 1.0; /* mask, count */
  switch (id) {
  case TALUS_STAGE_RAIN:
    return cell + 8.0; /* the top column's w */
  case TALUS_STAGE_PIPES:
    return cell + m * (36.0 + 44.0); /* B s w C r f[4] | pipe f slip kr sina */
  case TALUS_STAGE_INFLOW:
    /* count; columns below the top only: B s w C, the neighbours' pipe f
     * slip | qin[2] */
    return cell + (m - 1.0) * (16.0 + 36.0 + 8.0);
  case TALUS_STAGE_TRANSPORT:
    return cell + m * (60.0 + 20.0); /* f slip kr pipe w s r B C | w vx vy s r */
  case TALUS_STAGE_HORIZONTAL:
    return cell + m * (16.0 + 12.0); /* B s w D | D sig_lo sig_hi */
  case TALUS_STAGE_SPLIT:
    return cell + m * 4.0; /* D */
  case TALUS_STAGE_VERTICAL:
    return cell + m * (36.0 + 20.0); /* w s r B C D sina vx vy | C s B r D */
  case TALUS_STAGE_SUPPORT_INIT:
    return 1.0 + m * 4.0; /* count | p */
  case TALUS_STAGE_SUPPORT_RED:
  case TALUS_STAGE_SUPPORT_BLACK:
    return 1.0 + 0.5 * (m - 1.0) * (20.0 + 4.0); /* B C s w p | p */
  case TALUS_STAGE_COLLAPSE:
    return 1.0 + (m - 1.0) * 12.0; /* p B C */
  default:
    return 0.0;
  }
}

/* Droplet stages, either model (m columns per cell, 1 on heightfields):
 * clear and apply touch every column's two int64 totals, apply its
 * height(s) too; a droplet's L moves each read its 4 nodes' heights
 * (count, C, B and s on layered stacks) and add into its brush's
 * (2r + 2)² totals, 2^-n droplets per cell. */
static double pt_bytes(const talus_kparams *P, talus_stage_id id, double m) {
  int layered = P->model == TALUS_MODEL_LAYERED;
  double heights = layered ? 8.0 : 4.0, side = 2.0 * P->pt_brush_radius + 2.0;
  switch (id) {
  case TALUS_STAGE_PT_CLEAR:
    return (layered ? 1.0 : 0.0) + m * 16.0; /* count | totals */
  case TALUS_STAGE_PT_APPLY:
    return (layered ? 1.0 : 0.0) + m * (16.0 + 2.0 * heights); /* count totals B (s) | B (s) */
  case TALUS_STAGE_PT_TRACE:
    return ldexp(1.0, -P->pt_density_log2) * P->pt_max_moves *
           (4.0 * (heights + (layered ? 5.0 : 0.0)) + side * side * 8.0);
  default:
    return 0.0;
  }
}

double bench_stage_bytes(const talus_tile *t, const talus_kparams *P, talus_stage_id id,
                         double mean_columns) {
  if (id == TALUS_STAGE_PT_CLEAR || id == TALUS_STAGE_PT_TRACE || id == TALUS_STAGE_PT_APPLY)
    return pt_bytes(P, id, P->model == TALUS_MODEL_LAYERED ? mean_columns : 1.0);
  if (id == TALUS_STAGE_THERMAL_OUT || id == TALUS_STAGE_THERMAL_IN) return thermal_bytes(t, P, id);
  if (P->model == TALUS_MODEL_HEIGHTFIELD) return hf_bytes(t, id);
  return layered_bytes(t, id, mean_columns);
}
