// Tensor: a dense float32 array with a shape, 64-byte aligned, row-major.
//
// Activations use NCHW (batch, channels, height, width); convolution weights
// OIHW; dense weights [out, in], as PyTorch stores them. A Tensor owns its
// storage and has value semantics: copying copies the data (use std::move to
// avoid it). Not thread-safe for concurrent mutation; concurrent reads are
// fine.
#ifndef XWIRES_CORE_TENSOR_H_
#define XWIRES_CORE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

namespace xw {

// Storage for AlignedAllocator: at least 64-byte aligned (one cache line,
// one AVX-512 register); blocks of 8 MiB or more are aligned to 2 MiB
// and offered to the kernel's transparent huge pages (madvise on Linux), so
// that the large tensors (VGG's classifier weights, gradients and Adam
// state, batch activations) take 512 times fewer TLB entries and page
// faults; freed ones are kept for reuse by an allocation of the same size
// (at most 128 MiB in all), so a training step's large temporaries do not
// fault in fresh pages every step. Thread-safe. Throws std::bad_alloc.
// FreeBlock takes the size it was given.
void* AllocateBlock(std::size_t bytes);
void FreeBlock(void* p, std::size_t bytes);

// Minimal allocator returning 64-byte aligned memory, so kernels may use
// aligned loads on tensor starts (AllocateBlock).
template <typename T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::size_t kAlignment = 64;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) {}  // NOLINT
  T* allocate(std::size_t n) { return static_cast<T*>(AllocateBlock(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) { FreeBlock(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const AlignedAllocator<U>&) const { return true; }
};

using Shape = std::vector<int64_t>;
using AlignedFloats = std::vector<float, AlignedAllocator<float>>;

// "[2, 3, 32, 32]"
std::string ShapeToString(const Shape& s);
int64_t ShapeSize(const Shape& s);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of the given shape. Dimensions must be >= 0.
  explicit Tensor(Shape shape);
  Tensor(Shape shape, float fill);
  Tensor(std::initializer_list<int64_t> shape) : Tensor(Shape(shape)) {}

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  bool empty() const { return data_.empty(); }

  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float& operator[](int64_t i) { return data_[i]; }
  float operator[](int64_t i) const { return data_[i]; }

  // Element (n, c, h, w) of a rank-4 tensor.
  float& at(int64_t n, int64_t c, int64_t h, int64_t w) {
    return data_[((n * shape_[1] + c) * shape_[2] + h) * shape_[3] + w];
  }
  float at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return data_[((n * shape_[1] + c) * shape_[2] + h) * shape_[3] + w];
  }

  void Fill(float v);
  void SetZero() { Fill(0.0f); }
  // Changes the shape; the element count must stay the same.
  void Reshape(Shape shape);
  // Reallocates (zero-filled) only if the shape changes; keeps the buffer
  // otherwise, so per-batch scratch tensors do not reallocate every step.
  void Resize(const Shape& shape);

  bool SameShape(const Tensor& o) const { return shape_ == o.shape_; }
  // Bitwise equality of shape and data (NaNs with equal bits compare equal).
  bool BitwiseEqual(const Tensor& o) const;

 private:
  Shape shape_;
  AlignedFloats data_;
};

}  // namespace xw

#endif  // XWIRES_CORE_TENSOR_H_
