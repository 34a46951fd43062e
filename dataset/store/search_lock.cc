#include "xwires/dataset/store/search_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "xwires/core/clock.h"

namespace xw {

namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buf[256];
  ssize_t n;
  off_t at = 0;
  while ((n = ::pread(fd, buf, sizeof buf, at)) > 0 && text.size() < 1024) {
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0'))
    text.pop_back();
  return text;
}

}  // namespace

Result<SearchWriterLock> SearchWriterLock::Acquire(const Dataset& ds,
                                                   int64_t search_id) {
  if (ds.read_only())
    return Status::FailedPrecondition(ds.dir() + ": opened read-only");
  const std::string dir = ds.dir() + "/locks";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path =
      dir + "/search-" + std::to_string(search_id) + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError(path + ": cannot open lock file: " +
                           std::strerror(errno));
  }
  int rc;
  while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int err = errno;
    const std::string holder = ReadAll(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::FailedPrecondition(
          ds.dir() + ": search " + std::to_string(search_id) +
          " is being written by another process (" +
          (holder.empty() ? std::string("holder unknown") : holder) +
          "); a search has one writer: wait for it to end, or stop it "
          "(SIGINT) and resume");
    }
    return Status::IOError(path + ": cannot lock: " + std::strerror(err));
  }
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  const std::string text = "pid " + std::to_string(::getpid()) + " on host " +
                           host + " since " + UtcNow() + "\n";
  // Best effort: the text only informs a refused writer.
  if (::ftruncate(fd, 0) == 0) {
    (void)!::pwrite(fd, text.data(), text.size(), 0);
  }
  return SearchWriterLock(fd);
}

SearchWriterLock& SearchWriterLock::operator=(SearchWriterLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

SearchWriterLock::~SearchWriterLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace xw
