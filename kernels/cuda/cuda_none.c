/*
 * cuda_none.c — the CUDA backend of a build without the CUDA toolkit: it
 * says so, and every call fails with TALUS_ERR_UNSUPPORTED.
 */
#include "cuda.h"

int talus_cuda_built(void) {
  return 0;
}

static talus_status cuda_missing(void) {
  return talus_fail(TALUS_ERR_UNSUPPORTED, "cuda",
                    "this talus was built without the CUDA backend (rebuild with the CUDA "
                    "toolkit and -DTALUS_CUDA=ON)");
}

talus_status talus_cuda_init(int local_rank, char *name, size_t len) {
  if (name && len) name[0] = '\0';
  return cuda_missing();
}

talus_status talus_cuda_use_slot(int slot) {
  return cuda_missing();
}

talus_status talus_cuda_pin(const talus_tile *t) {
  return cuda_missing();
}

void talus_cuda_unpin(const talus_tile *t) {}

talus_status talus_cuda_upload(const talus_tile *t) {
  return cuda_missing();
}

talus_status talus_cuda_upload_async(const talus_tile *t) {
  return cuda_missing();
}

talus_status talus_cuda_stage(const talus_kctx *c, talus_stage_id id, talus_rect region,
                              talus_rect book) {
  return cuda_missing();
}

talus_status talus_cuda_end_step(void) {
  return cuda_missing();
}

talus_status talus_cuda_wait(double *flows, double *stage_seconds) {
  return cuda_missing();
}

talus_status talus_cuda_finish_step(double *flows, double *stage_seconds) {
  return cuda_missing();
}

talus_status talus_cuda_download(talus_tile *t) {
  return cuda_missing();
}

talus_status talus_cuda_block_layers(const talus_rect *r, int n, int *layers) {
  return cuda_missing();
}

talus_status talus_cuda_pack_blocks(const talus_rect *r, const int *layers, int n,
                                    const void **bodies) {
  return cuda_missing();
}

talus_status talus_cuda_resident_fits(const talus_tile *like, int n, int *fits) {
  *fits = 0;
  return cuda_missing();
}

talus_status talus_cuda_resident_create(int n) {
  return cuda_missing();
}

talus_status talus_cuda_resident_upload(int id, const talus_tile *t) {
  return cuda_missing();
}

talus_status talus_cuda_resident_bind(int id, talus_rect view) {
  return cuda_missing();
}

talus_status talus_cuda_resident_copy(int dst, int src, talus_rect r) {
  return cuda_missing();
}

talus_status talus_cuda_fence(void) {
  return cuda_missing();
}

void talus_cuda_resident_free(void) {}

void talus_cuda_release(void) {}
