/*
 * fuzz_util.c — what the fuzz targets share: bytes as a file that the
 * library can open by path (the config loader and the store read files).
 */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

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
