// A fault injector for the build-fault tests (docs/testing.md, "Faults in
// builds"), loaded with LD_PRELOAD into a tool and the stages it spawns.
// It counts the bytes a process writes to regular files whose path contains
// TESSERA_FAULT_MATCH (every regular file when unset) and, once the count
// would pass TESSERA_FAULT_AFTER, does what TESSERA_FAULT_KIND says:
//   kill    write the bytes up to the limit, then SIGKILL the process
//           (a stage killed half-way through a file);
//   enospc  write the bytes up to the limit, then fail with ENOSPC (a full disk).
// Pipes and terminals are never counted, so diagnostics still get out.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

namespace {

using write_fn = ssize_t (*)(int, const void*, size_t);
using writev_fn = ssize_t (*)(int, const struct iovec*, int);

unsigned long long written;

int counted(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const char* match = getenv("TESSERA_FAULT_MATCH");
  if (!match || !*match) return 1;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  return std::strstr(path, match) != nullptr;
}

// How many of `want` bytes may still be written before the fault; -1: no fault armed.
long long allowance(size_t want) {
  const char* kind = getenv("TESSERA_FAULT_KIND");
  const char* after = getenv("TESSERA_FAULT_AFTER");
  if (!kind || !after) return -1;
  unsigned long long limit = strtoull(after, NULL, 10);
  if (written + want <= limit) return -1;
  return written >= limit ? 0 : (long long)(limit - written);
}

ssize_t fault(int fd, const void* buf, size_t room, write_fn real) {
  if (room > 0 && real(fd, buf, room) < 0) return -1;
  written += room;
  if (strcmp(getenv("TESSERA_FAULT_KIND"), "kill") == 0) raise(SIGKILL);
  errno = ENOSPC;
  return room > 0 ? (ssize_t)room : -1;
}

} // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t count) {
  static write_fn real;
  if (!real) real = reinterpret_cast<write_fn>(dlsym(RTLD_NEXT, "write"));
  if (counted(fd)) {
    long long room = allowance(count);
    if (room >= 0) return fault(fd, buf, (size_t)room, real);
    written += count;
  }
  return real(fd, buf, count);
}

ssize_t writev(int fd, const struct iovec* iov, int n) {
  static writev_fn real;
  if (!real) real = reinterpret_cast<writev_fn>(dlsym(RTLD_NEXT, "writev"));
  if (counted(fd)) {
    size_t total = 0;
    for (int i = 0; i < n; ++i) total += iov[i].iov_len;
    if (allowance(total) >= 0) {
      // Rare path: fall back to one write per buffer so the limit lands exactly.
      ssize_t done = 0;
      for (int i = 0; i < n; ++i) {
        ssize_t r = write(fd, iov[i].iov_base, iov[i].iov_len);
        if (r < 0) return done > 0 ? done : -1;
        done += r;
        if ((size_t)r < iov[i].iov_len) break;
      }
      return done;
    }
    written += total;
  }
  return real(fd, iov, n);
}

} // extern "C"
