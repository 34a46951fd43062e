#include "dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xw {

Result<DirLock> DirLock::Acquire(const std::string& dir, Kind kind) {
  std::string path = dir + "/" + kFileName;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IOError(path +
                           ": cannot open lock file: " + std::strerror(errno));
  int op = kind == Kind::kShared ? LOCK_SH : LOCK_EX;
  while (::flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    return Status::IOError(path + ": cannot lock: " + std::strerror(err));
  }
  return DirLock(fd);
}

DirLock& DirLock::operator=(DirLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace xw
