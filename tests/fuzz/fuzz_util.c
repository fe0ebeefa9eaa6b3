/*
 * fuzz_util.c — what the fuzz targets share: bytes as a file that the
 * library can open by path (the config loader and the store read files),
 * and a scratch directory for the files a target writes.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char scratch[4096]; /* made by mkdtemp under $TMPDIR (or /tmp) */
static int scratch_made;

void fuzz_dir_clear(void) {
  DIR *d = opendir(fuzz_dir());
  for (struct dirent *e; d && (e = readdir(d));) {
    char path[sizeof scratch + 256];
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
}

static void fuzz_dir_remove(void) {
  fuzz_dir_clear();
  rmdir(scratch);
}

const char *fuzz_dir(void) {
  if (!scratch_made) {
    const char *tmp = getenv("TMPDIR"), *base = tmp && *tmp ? tmp : "/tmp";
    int n = snprintf(scratch, sizeof scratch, "%s/talus-fuzz-XXXXXX", base);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof scratch, "scratch directory name under %s too long",
               base);
    FUZZ_CHECK(mkdtemp(scratch), "cannot create scratch directory %s: %s", scratch,
               strerror(errno));
    scratch_made = 1;
    atexit(fuzz_dir_remove);
  }
  return scratch;
}

int fuzz_file_open(const void *data, size_t size, char *path, size_t cap) {
  int fd = memfd_create("talus-fuzz", 0);
  FUZZ_CHECK(fd >= 0, "memfd_create failed");
  FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "memfd write failed");
  snprintf(path, cap, "/proc/self/fd/%d", fd);
  return fd;
}

void fuzz_file_close(int fd) {
  close(fd);
}
