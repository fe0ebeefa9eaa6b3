/*
 * talus_status.h — status codes, the last error and the progress callback:
 * the part of the public API that every module of talus may include
 * (common/ includes this, not talus.h), as zstd_errors.h is zstd's.
 *
 * Design notes
 * ------------
 * - The codes are stable: new codes are appended, never renumbered.
 * - On failure a human-readable message is kept in a thread-local buffer
 *   (talus_last_error()); the failing function records it once and its
 *   callers pass the status up unchanged.
 * - Progress callbacks have GDAL's shape, so a GDAL progress function can
 *   be passed as it is; returning 0 cancels.
 */
#ifndef TALUS_STATUS_H
#define TALUS_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define TALUS_VERSION_MAJOR  0
#define TALUS_VERSION_MINOR  1
#define TALUS_VERSION_PATCH  0
#define TALUS_VERSION_STRING "0.1.0"

/* Stable status codes. Never renumber; append only. */
typedef enum talus_status {
  TALUS_OK = 0,
  TALUS_ERR_ARGUMENT = 1,    /* a bad argument from the caller */
  TALUS_ERR_NOMEM = 2,       /* allocation failed */
  TALUS_ERR_IO = 3,          /* a file could not be read or written */
  TALUS_ERR_FORMAT = 4,      /* a file is not what it claims to be */
  TALUS_ERR_PARAM = 5,       /* unknown configuration key */
  TALUS_ERR_RANGE = 6,       /* configuration value out of range / bad type */
  TALUS_ERR_DATA = 7,        /* input data unusable (NaN, all NoData, size) */
  TALUS_ERR_CANCELLED = 8,   /* the progress callback asked to stop */
  TALUS_ERR_UNSUPPORTED = 9, /* feature not built or not available */
  TALUS_ERR_INTERNAL = 10,   /* an invariant broke: a bug in talus */
  TALUS_ERR_DEVICE = 11      /* accelerator missing or failing */
} talus_status;

/* Name of a status code ("TALUS_ERR_IO"); never NULL. */
const char *talus_status_name(talus_status status);

/* Message describing the last failure on this thread; "" if none.
 * Owned by the library, valid until the next talus call on this thread. */
const char *talus_last_error(void);

/* GDAL-compatible progress callback: complete in [0,1], message may be NULL.
 * Return non-zero to continue, 0 to cancel. */
typedef int (*talus_progress_fn)(double complete, const char *message, void *user);

#ifdef __cplusplus
}
#endif
#endif /* TALUS_STATUS_H */
