// Initial designs (random, Sobol, Latin hypercube) and candidate sets. Every
// point is a pure function of (seed, index), so a rebuilt optimizer proposes
// the same design.
#include <algorithm>
#include <numeric>

#include "optimizer_internal.h"
#include "util.h"
#include "xwires/core/rng.h"

namespace xw::hpo::internal {
namespace {

std::vector<double> RandomPoint(int dim, uint64_t seed, uint64_t stream,
                                uint64_t k) {
  const Philox rng(seed, stream);
  std::vector<double> u(dim);
  for (int j = 0; j < dim; ++j) u[j] = UniformDouble(rng, k * dim + j);
  return u;
}

// Row k of an n-point Latin hypercube: dimension j puts point k in stratum
// perm_j[k] of n, jittered uniformly inside it. perm_j is a Fisher-Yates
// shuffle driven by Philox(seed, "hpo/initial/lhs/perm" + j).
std::vector<double> LatinHypercubePoint(int dim, int n, uint64_t seed,
                                        uint64_t k) {
  std::vector<double> u(dim);
  const Philox jitter(seed, StreamId("hpo/initial/lhs/jitter"));
  for (int j = 0; j < dim; ++j) {
    const Philox rng(seed, MixStream(StreamId("hpo/initial/lhs/perm"), j));
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = n - 1; i > 0; --i) {
      const int r = static_cast<int>(UniformDouble(rng, i) * (i + 1));
      std::swap(perm[i], perm[std::min(r, i)]);
    }
    u[j] = (perm[k] + UniformDouble(jitter, k * dim + j)) / n;
  }
  return u;
}

}  // namespace

std::vector<double> InitialDesignPoint(InitialDesign kind, int dim,
                                       int n_initial, uint64_t seed, uint64_t k,
                                       uint64_t attempt) {
  if (attempt > 0) {
    return RandomPoint(dim, seed,
                       MixStream(StreamId("hpo/initial/retry"), attempt), k);
  }
  switch (kind) {
    case InitialDesign::kSobol: {
      if (dim > Sobol::kMaxDim) break;  // too many dimensions: random
      const Sobol sobol = Sobol::Create(dim).value();
      const Philox rng(seed, StreamId("hpo/initial/sobol_shift"));
      std::vector<uint32_t> shift(dim);
      for (int j = 0; j < dim; ++j) shift[j] = rng.U32(j);
      std::vector<double> u(dim);
      sobol.Point(k, u.data(), shift.data());
      return u;
    }
    case InitialDesign::kLatinHypercube:
      if (k < static_cast<uint64_t>(n_initial)) {
        return LatinHypercubePoint(dim, n_initial, seed, k);
      }
      break;
    case InitialDesign::kRandom:
      break;
  }
  return RandomPoint(dim, seed, StreamId("hpo/initial/random"), k);
}

std::vector<double> SobolCandidates(const Sobol& sobol, int count,
                                    uint64_t seed, uint64_t stream) {
  const Philox rng(seed, stream);
  std::vector<uint32_t> shift(sobol.dim());
  for (int j = 0; j < sobol.dim(); ++j) shift[j] = rng.U32(j);
  std::vector<double> out(static_cast<size_t>(count) * sobol.dim());
  sobol.Generate(0, count, out.data(), shift.data());
  return out;
}

}  // namespace xw::hpo::internal
