/* An LD_PRELOAD library that makes a dying disk of chosen files: once a
 * number of calls have gone through, every write, read or fsync of a file
 * whose path contains a given text fails with EIO, as the kernel reports a
 * failing device. The program's own calls into libc (and those of SQLite,
 * HDF5, libarchive and the C++ runtime) are interposed; glibc's internal
 * calls are not (stdio, which the dataset does not use for its files).
 *
 * Environment:
 *   XWIRES_EIO_PATH   text a file's path must contain (required; unset: the
 *                     library does nothing)
 *   XWIRES_EIO_OPS    which calls fail: a comma list of write (write, pwrite,
 *                     writev, pwritev), read (read, pread, readv, preadv) and
 *                     fsync (fsync, fdatasync); default "write,fsync"
 *   XWIRES_EIO_AFTER  how many matching calls succeed before the first
 *                     failure (default 0); from then on all matching calls fail
 * Standard streams (fd 0-2) are never failed. Thread-safe (an atomic count).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { kWrite = 1, kRead = 2, kFsync = 4 };

static long g_after = 0;
static long g_seen = 0; /* matching calls so far (atomic) */
static int g_ops = kWrite | kFsync;
static const char* g_path = NULL;

__attribute__((constructor)) static void Init(void) {
  g_path = getenv("XWIRES_EIO_PATH");
  if (g_path != NULL && *g_path == '\0') g_path = NULL;
  const char* after = getenv("XWIRES_EIO_AFTER");
  if (after != NULL) g_after = strtol(after, NULL, 10);
  const char* ops = getenv("XWIRES_EIO_OPS");
  if (ops != NULL) {
    g_ops = 0;
    if (strstr(ops, "write") != NULL) g_ops |= kWrite;
    if (strstr(ops, "read") != NULL) g_ops |= kRead;
    if (strstr(ops, "fsync") != NULL) g_ops |= kFsync;
  }
}

/* Whether this call on `fd` fails: its file matches and the count is spent. */
static int Fail(int fd, int op) {
  if (g_path == NULL || fd <= 2 || (g_ops & op) == 0) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  if (strstr(target, g_path) == NULL) return 0;
  if (__atomic_fetch_add(&g_seen, 1, __ATOMIC_SEQ_CST) < g_after) return 0;
  errno = EIO;
  return 1;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buf, size_t n) {
  return Fail(fd, kWrite) ? -1 : NEXT(write)(fd, buf, n);
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return Fail(fd, kWrite) ? -1 : NEXT(pwrite)(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  return Fail(fd, kWrite) ? -1 : NEXT(pwrite64)(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  return Fail(fd, kWrite) ? -1 : NEXT(writev)(fd, iov, cnt);
}
ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  return Fail(fd, kWrite) ? -1 : NEXT(pwritev)(fd, iov, cnt, off);
}
ssize_t read(int fd, void* buf, size_t n) {
  return Fail(fd, kRead) ? -1 : NEXT(read)(fd, buf, n);
}
ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return Fail(fd, kRead) ? -1 : NEXT(pread)(fd, buf, n, off);
}
ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  return Fail(fd, kRead) ? -1 : NEXT(pread64)(fd, buf, n, off);
}
ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  return Fail(fd, kRead) ? -1 : NEXT(readv)(fd, iov, cnt);
}
ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  return Fail(fd, kRead) ? -1 : NEXT(preadv)(fd, iov, cnt, off);
}
int fsync(int fd) { return Fail(fd, kFsync) ? -1 : NEXT(fsync)(fd); }
int fdatasync(int fd) { return Fail(fd, kFsync) ? -1 : NEXT(fdatasync)(fd); }
