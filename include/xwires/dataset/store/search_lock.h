// The one writer of a search. A search's rows (pending, failed and finished
// trials, its status) are written by one process at a time: the search
// driver holds SearchWriterLock for the whole run, from creating or resuming
// the search until it ends. A second `search --resume N` (or any other
// writer asking for search N) is refused with FailedPrecondition naming the
// holder's pid, host and start time, instead of re-training the holder's
// pending points.
//
// The lock is an exclusive flock(2) on DIR/locks/search-<id>.lock, whose
// text names the holder ("pid P on host H since T"). The kernel drops it
// when the holder dies (kill -9 included), so a lease left by a dead process
// is taken over by the next writer with no clean-up step; the stale text is
// overwritten. (flock is honoured across hosts on local file systems and
// NFSv4; on a network file system without locks, run one writer per search.)
//
// Thread-safety: a lock object is owned by one thread; distinct objects of
// one process on one search conflict like two processes.
#ifndef XWIRES_DATASET_STORE_SEARCH_LOCK_H_
#define XWIRES_DATASET_STORE_SEARCH_LOCK_H_

#include <cstdint>
#include <string>

#include "xwires/core/status.h"
#include "xwires/dataset/store/dataset.h"

namespace xw {

class SearchWriterLock {
 public:
  // Takes the lock of search `search_id` of `ds` without waiting.
  // FailedPrecondition if another writer holds it (message names the
  // holder); FailedPrecondition on a read-only dataset; IOError if the lock
  // file cannot be created.
  static Result<SearchWriterLock> Acquire(const Dataset& ds, int64_t search_id);

  SearchWriterLock(SearchWriterLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  SearchWriterLock& operator=(SearchWriterLock&& o) noexcept;
  SearchWriterLock(const SearchWriterLock&) = delete;
  SearchWriterLock& operator=(const SearchWriterLock&) = delete;
  ~SearchWriterLock();  // releases the lock

 private:
  explicit SearchWriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace xw

#endif  // XWIRES_DATASET_STORE_SEARCH_LOCK_H_
