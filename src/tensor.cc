#include "xwires/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace xw {

namespace {

constexpr std::size_t kSmallAlignment = AlignedAllocator<float>::kAlignment;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Blocks from this size on are large: 2 MiB aligned (the alignment wastes
// at most a quarter of the block's address span, and no memory: pages
// never touched are never mapped), and kept for reuse when freed.
constexpr std::size_t kLargeBytes = std::size_t{8} << 20;
// Freed large blocks kept at most, in bytes: VGG-11's step cycles about 75
// MiB of them at batch 128. Every byte kept is resident: the default search
// (many trials, freeing tensors of many sizes) peaked at 554 MiB without the
// pool, 746 with this bound and 885 with 256 MiB.
constexpr std::size_t kPoolBytes = std::size_t{128} << 20;

// Freed large blocks, by size. A training step frees and allocates the same
// large temporaries every step (flipped kernels, per-call scratch, batch
// tensors); reusing them spares a page fault per page each time, and with
// huge pages the kernel's compaction on those faults.
class BlockPool {
 public:
  void* Take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = free_.size(); i-- > 0;) {  // the latest first: warmest in cache
      if (free_[i].first != bytes) continue;
      void* p = free_[i].second;
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      held_ -= bytes;
      return p;
    }
    return nullptr;
  }
  bool Keep(void* p, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_ + bytes > kPoolBytes) return false;
    free_.emplace_back(bytes, p);
    held_ += bytes;
    return true;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::size_t, void*>> free_;
  std::size_t held_ = 0;
};

BlockPool& Pool() {
  static BlockPool* pool = new BlockPool;  // never destroyed: tensors may outlive statics
  return *pool;
}

}  // namespace

void* AllocateBlock(std::size_t bytes) {
  if (bytes < kLargeBytes) return ::operator new(bytes, std::align_val_t(kSmallAlignment));
  if (void* p = Pool().Take(bytes)) return p;
  void* p = ::operator new(bytes, std::align_val_t(kHugePage));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: where transparent huge pages are off this changes nothing.
  (void)madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeBlock(void* p, std::size_t bytes) {
  if (bytes < kLargeBytes) return ::operator delete(p, std::align_val_t(kSmallAlignment));
  if (Pool().Keep(p, bytes)) return;
  ::operator delete(p, std::align_val_t(kHugePage));
}

std::string ShapeToString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t ShapeSize(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw std::invalid_argument("negative dimension in shape " + ShapeToString(s));
    n *= d;
  }
  return n;
}

Tensor::Tensor(Shape shape) : shape_(std::move(shape)), data_(ShapeSize(shape_), 0.0f) {}

Tensor::Tensor(Shape shape, float fill) : shape_(std::move(shape)), data_(ShapeSize(shape_), fill) {}

void Tensor::Fill(float v) { std::fill(data_.begin(), data_.end(), v); }

void Tensor::Reshape(Shape shape) {
  if (ShapeSize(shape) != size()) {
    throw std::invalid_argument("cannot reshape " + ShapeToString(shape_) + " to " +
                                ShapeToString(shape));
  }
  shape_ = std::move(shape);
}

void Tensor::Resize(const Shape& shape) {
  if (shape == shape_) return;
  int64_t n = ShapeSize(shape);
  shape_ = shape;
  data_.assign(n, 0.0f);
}

bool Tensor::BitwiseEqual(const Tensor& o) const {
  return shape_ == o.shape_ &&
         (data_.empty() || std::memcmp(data_.data(), o.data_.data(), data_.size() * sizeof(float)) == 0);
}

}  // namespace xw
