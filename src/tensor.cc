#include "xwires/core/tensor.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace xw {

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
