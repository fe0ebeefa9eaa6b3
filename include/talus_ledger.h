/*
 * talus_ledger.h — the mass ledger's vocabulary: the materials, the
 * summary of one ledger, and the flows by index with the materials each
 * moves between. Implemented by kernels/ (the flow table); part of talus.h.
 */
#ifndef TALUS_LEDGER_H
#define TALUS_LEDGER_H

#ifdef __cplusplus
extern "C" {
#endif

/* The mass ledger: volumes in m³. Materials and flows are listed by index. */
typedef enum talus_material {
  TALUS_MAT_WATER = 0,
  TALUS_MAT_SEDIMENT = 1,
  TALUS_MAT_SAND = 2,
  TALUS_MAT_BEDROCK = 3,
  TALUS_MAT_COUNT = 4,
  TALUS_MAT_OUTSIDE = 4 /* the world beyond the domain: sources and sinks */
} talus_material;

typedef struct talus_ledger_summary {
  double initial[TALUS_MAT_COUNT];  /* volume held at creation */
  double current[TALUS_MAT_COUNT];  /* volume held now */
  double inflow[TALUS_MAT_COUNT];   /* sum of recorded flows into it */
  double outflow[TALUS_MAT_COUNT];  /* sum of recorded flows out of it */
  double residual[TALUS_MAT_COUNT]; /* current-initial-inflow+outflow */
  double total_residual;            /* over all materials */
} talus_ledger_summary;

int talus_flow_count(void);
/* Flow i: its name, and the materials it moves from and to. */
const char *talus_flow_name(int flow, talus_material *from, talus_material *to);
#ifdef __cplusplus
}
#endif
#endif /* TALUS_LEDGER_H */
