// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
//
// Every value is a pure function of (seed, stream, index): there is no hidden
// state, so any element of any stream can be computed by any thread in any
// order and still give the same bits. Streams separate uses (init of each
// parameter, dropout of each layer and step, data order, synthetic data), so
// adding a draw to one never shifts another.
#ifndef XWIRES_CORE_RNG_H_
#define XWIRES_CORE_RNG_H_

#include <array>
#include <cstdint>
#include <string_view>

namespace xw {

// Stable 64-bit stream id of a name (FNV-1a), e.g. StreamId("init/conv1.weight").
uint64_t StreamId(std::string_view name);
// Combines stream ids: StreamId(a) mixed with b (e.g. a step number).
uint64_t MixStream(uint64_t stream, uint64_t value);

class Philox {
 public:
  Philox(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}

  // The raw Philox4x32-10 block for counter (index, stream) and key seed.
  std::array<uint32_t, 4> Block(uint64_t block_index) const;
  // The index-th 32-bit word of the stream (four words per block).
  uint32_t U32(uint64_t index) const;
  // Uniform in [0, 1): the top 24 bits of U32(index) times 2^-24 (exact).
  float Uniform(uint64_t index) const;
  // Standard normal by Box-Muller on words 2*index and 2*index+1, in double.
  float Normal(uint64_t index) const;

  // out[i] = Uniform(first + i) for i < n, one Philox block per four values
  // (Uniform computes a whole block for each). Sequential; out holds n floats.
  void UniformRange(uint64_t first, int64_t n, float* out) const;
  // out[i] = Normal(first + i) for i < n, one block per two values.
  void NormalRange(uint64_t first, int64_t n, float* out) const;

  // out[i] = lo + (hi - lo) * Uniform(offset + i); parallel, deterministic.
  void FillUniform(float* out, int64_t n, float lo, float hi, uint64_t offset = 0) const;
  // out[i] = mean + stddev * Normal(offset + i); parallel, deterministic.
  void FillNormal(float* out, int64_t n, float mean, float stddev, uint64_t offset = 0) const;

  // Raw Philox4x32-10 on explicit counter and key words (for known-answer tests).
  static std::array<uint32_t, 4> Raw(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key);

 private:
  uint64_t seed_;
  uint64_t stream_;
};

}  // namespace xw

#endif  // XWIRES_CORE_RNG_H_
