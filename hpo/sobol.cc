#include "xwires/hpo/sobol.h"

#include <bit>
#include <string>

namespace xw::hpo {
namespace {

// Joe-Kuo new-joe-kuo-6.21201, dimensions 2..21: degree s of the primitive
// polynomial, its interior coefficients a, and the initial m_1..m_s.
struct DirectionInit {
  int s;
  uint32_t a;
  uint32_t m[7];
};
constexpr DirectionInit kJoeKuo[Sobol::kMaxDim - 1] = {
    {1, 0, {1}},
    {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},
    {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},
    {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},
    {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},
    {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},
    {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},
    {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},
    {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},
    {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}},
    {7, 4, {1, 3, 7, 13, 13, 15, 69}},
};

}  // namespace

Result<Sobol> Sobol::Create(int dim) {
  if (dim < 1 || dim > kMaxDim) {
    return Status::InvalidArgument("Sobol dimension must be in [1, " +
                                   std::to_string(kMaxDim) + "], got " +
                                   std::to_string(dim));
  }
  return Sobol(dim);
}

Sobol::Sobol(int dim) : dim_(dim), v_(static_cast<size_t>(dim) * 32) {
  // Dimension 1: the van der Corput sequence in base 2 (all m_k = 1).
  for (int b = 0; b < 32; ++b) v_[b] = 1u << (31 - b);
  for (int j = 1; j < dim; ++j) {
    const DirectionInit& in = kJoeKuo[j - 1];
    uint32_t* v = &v_[static_cast<size_t>(j) * 32];
    for (int b = 0; b < in.s; ++b) v[b] = in.m[b] << (31 - b);
    // Bratley-Fox recurrence on the scaled direction numbers.
    for (int b = in.s; b < 32; ++b) {
      uint32_t x = v[b - in.s] ^ (v[b - in.s] >> in.s);
      for (int k = 1; k < in.s; ++k) {
        if ((in.a >> (in.s - 1 - k)) & 1u) x ^= v[b - k];
      }
      v[b] = x;
    }
  }
}

void Sobol::Point(uint64_t index, double* out, const uint32_t* shift) const {
  const uint64_t gray = index ^ (index >> 1);
  for (int j = 0; j < dim_; ++j) {
    const uint32_t* v = &v_[static_cast<size_t>(j) * 32];
    uint32_t x = shift ? shift[j] : 0u;
    for (int b = 0; b < 32; ++b) {
      if ((gray >> b) & 1u) x ^= v[b];
    }
    out[j] = static_cast<double>(x) * 0x1.0p-32;
  }
}

void Sobol::Generate(uint64_t start, int64_t count, double* out,
                     const uint32_t* shift) const {
  if (count <= 0) return;
  std::vector<uint32_t> x(dim_);
  const uint64_t gray = start ^ (start >> 1);
  for (int j = 0; j < dim_; ++j) {
    const uint32_t* v = &v_[static_cast<size_t>(j) * 32];
    x[j] = shift ? shift[j] : 0u;
    for (int b = 0; b < 32; ++b) {
      if ((gray >> b) & 1u) x[j] ^= v[b];
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    if (i > 0) {
      // gray(k) ^ gray(k - 1) has the single bit ctz(k) set.
      const int b = std::countr_zero(start + static_cast<uint64_t>(i));
      for (int j = 0; j < dim_; ++j)
        x[j] ^= v_[static_cast<size_t>(j) * 32 + b];
    }
    for (int j = 0; j < dim_; ++j)
      out[i * dim_ + j] = static_cast<double>(x[j]) * 0x1.0p-32;
  }
}

}  // namespace xw::hpo
