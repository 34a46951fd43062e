// Internal: the dataset directory's advisory lock (DIR/xwires.lock, flock).
// Writers hold it shared from writing their HDF5 bundle until their SQL rows
// commit; `fsck --repair` holds it exclusively, so it never mistakes a bundle
// whose rows are about to commit for an orphan. The kernel drops the lock
// when the process dies.
#ifndef XWIRES_DATASET_STORE_DIR_LOCK_H_
#define XWIRES_DATASET_STORE_DIR_LOCK_H_

#include <string>

#include "xwires/core/status.h"

namespace xw {

class DirLock {
 public:
  enum class Kind { kShared, kExclusive };
  // Blocks until the lock on `dir`/xwires.lock is held (creating the file).
  static Result<DirLock> Acquire(const std::string& dir, Kind kind);
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&& o) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  static constexpr const char* kFileName = "xwires.lock";

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_DIR_LOCK_H_
