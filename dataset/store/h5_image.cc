#include "h5_image.h"

#include <cstring>

namespace xw::h5 {

namespace {

inline uint32_t Rot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

inline void Mix(uint32_t& a, uint32_t& b, uint32_t& c) {
  a -= c; a ^= Rot(c, 4);  c += b;
  b -= a; b ^= Rot(a, 6);  a += c;
  c -= b; c ^= Rot(b, 8);  b += a;
  a -= c; a ^= Rot(c, 16); c += b;
  b -= a; b ^= Rot(a, 19); a += c;
  c -= b; c ^= Rot(b, 4);  b += a;
}

inline void Final(uint32_t& a, uint32_t& b, uint32_t& c) {
  c ^= b; c -= Rot(b, 14);
  a ^= c; a -= Rot(c, 11);
  b ^= a; b -= Rot(a, 25);
  c ^= b; c -= Rot(b, 16);
  a ^= c; a -= Rot(c, 4);
  b ^= a; b -= Rot(a, 14);
  c ^= b; c -= Rot(b, 24);
}

inline uint32_t Le32(const unsigned char* k, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n && i < 4; ++i) v |= uint32_t{k[i]} << (8 * i);
  return v;
}

}  // namespace

uint32_t Lookup3(const unsigned char* k, size_t n, uint32_t initval) {
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + static_cast<uint32_t>(n) + initval;
  while (n > 12) {
    a += Le32(k, 4);
    b += Le32(k + 4, 4);
    c += Le32(k + 8, 4);
    Mix(a, b, c);
    n -= 12;
    k += 12;
  }
  if (n == 0) return c;
  // The last 1..12 bytes, zero-padded (lookup3's switch fall-through).
  a += Le32(k, n);
  if (n > 4) b += Le32(k + 4, n - 4);
  if (n > 8) c += Le32(k + 8, n - 8);
  Final(a, b, c);
  return c;
}

bool SealImageSuperblock(std::vector<char>& image) {
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  if (image.size() < 12 || std::memcmp(image.data(), kSignature, 8) != 0) return true;
  const int version = static_cast<unsigned char>(image[8]);
  if (version != 2 && version != 3) return true;
  // signature, version, offset size, length size, flags; then 4 addresses.
  const size_t offset_size = static_cast<unsigned char>(image[9]);
  const size_t body = 12 + 4 * offset_size;
  if (image.size() < body + 4) return false;
  const uint32_t sum =
      Lookup3(reinterpret_cast<const unsigned char*>(image.data()), body, 0);
  for (int i = 0; i < 4; ++i) image[body + i] = static_cast<char>(sum >> (8 * i));
  return true;
}

}  // namespace xw::h5
