// The ordered GEMM's tile engine (ordered_gemm.cc), included once per
// vector width inside a target's namespace: the includer declares
// `constexpr int kLanes` (floats per vector, dividing kPanel) and
// `constexpr int kMaxRows` (register-tile rows) first. No include guard: it
// is compiled once per (target, tile set). A lane is one output column's
// chain in the spec's order, so the tile set changes no bit.

namespace {

using ogemm::Grow;
using ogemm::kChunk;
using ogemm::kLanesChunk;
using ogemm::Scratch;

// The includer's kLanes (floats per vector) and kMaxRows set the tile.
using DF = hn::CappedTag<float, kLanes>;
using VF = hn::Vec<DF>;

// Vectors per 32-column panel row, and rows per register tile: as many rows
// as leave about four registers for the B vectors and the broadcast, at most
// kMaxRows (AVX-512: 8 rows x 2, or on split-op CPUs 4 x 2 and 256-bit 6 x
// 4; AVX2: 3 x 4; NEON: 3 x 8; SSE4: 1 x 8; scalar 1 x 32).
constexpr int kVecs = kPanel / kLanes;
#if HWY_ARCH_ARM_A64 || (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)
constexpr int kRegisters = 32;
#else
constexpr int kRegisters = 16;
#endif
constexpr int kRows = std::clamp((kRegisters - 4) / kVecs, 1, kMaxRows);
// Kahan keeps a sum and a compensation per output.
constexpr int kKahanRows = std::clamp((kRegisters - 6) / (2 * kVecs), 1, 4);

// An array, not a struct: GCC gives a struct's implicit constructor no
// target attributes, which fails to inline Highway's vector constructor on
// NEON.
template <int R>
using Acc = VF[R][kVecs];

template <int R>
HWY_INLINE void ZeroAcc(Acc<R>& acc) {
  const DF d;
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < kVecs; ++h) acc[r][h] = hn::Zero(d);
  }
}

// acc(r) += A(r, t) * B(t, :) for one term t: one rounding per product and
// one per add, or one per term with FMA.
template <int R, bool kFma>
HWY_INLINE void ChainTerm(const float* HWY_RESTRICT a, int64_t lda,
                          const float* HWY_RESTRICT bp, int64_t t, Acc<R>& acc) {
  const DF d;
  VF x[kVecs];
  for (int h = 0; h < kVecs; ++h) x[h] = hn::LoadU(d, bp + t * kPanel + h * kLanes);
  for (int r = 0; r < R; ++r) {
    const VF w = hn::Set(d, a[r * lda + t]);
    for (int h = 0; h < kVecs; ++h) acc[r][h] = Accumulate<kFma>(acc[r][h], x[h], w);
  }
}

// ChainTerm for t = tb, tb+step, ... < te: the Dot term order.
template <int R, bool kFma>
HWY_INLINE void Chain(const float* HWY_RESTRICT a, int64_t lda, const float* HWY_RESTRICT bp,
                      int64_t tb, int64_t te, int64_t step, Acc<R>& acc) {
  for (int64_t t = tb; t < te; t += step) ChainTerm<R, kFma>(a, lda, bp, t, acc);
}

// Neumaier's compensated sum of rounded products, as reduce.cc's Kahan.
template <int R>
HWY_INLINE void KahanChain(const float* HWY_RESTRICT a, int64_t lda,
                           const float* HWY_RESTRICT bp, int64_t n, Acc<R>& sum, Acc<R>& comp) {
  const DF d;
  for (int64_t t = 0; t < n; ++t) {
    for (int r = 0; r < R; ++r) {
      const VF w = hn::Set(d, a[r * lda + t]);
      for (int h = 0; h < kVecs; ++h) {
        const VF v = hn::Mul(hn::LoadU(d, bp + t * kPanel + h * kLanes), w);
        const VF s = hn::Add(sum[r][h], v);
        const VF big = hn::Add(hn::Sub(sum[r][h], s), v);
        const VF small = hn::Add(hn::Sub(v, s), sum[r][h]);
        const auto sum_wins = hn::Ge(hn::Abs(sum[r][h]), hn::Abs(v));
        comp[r][h] = hn::Add(comp[r][h], hn::IfThenElse(sum_wins, big, small));
        sum[r][h] = s;
      }
    }
  }
}

// reduce.cc's pairwise tree over terms [b, e): leaves of <= 8 sequential.
template <int R, bool kFma>
void PairwiseBlock(const float* a, int64_t lda, const float* bp, int64_t b, int64_t e,
                   Acc<R>& acc) {
  ZeroAcc<R>(acc);
  if (e - b <= 8) {
    Chain<R, kFma>(a, lda, bp, b, e, 1, acc);
    return;
  }
  const int64_t mid = b + (e - b) / 2;
  Acc<R> right;
  PairwiseBlock<R, kFma>(a, lda, bp, b, mid, acc);
  PairwiseBlock<R, kFma>(a, lda, bp, mid, e, right);
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < kVecs; ++h) acc[r][h] = hn::Add(acc[r][h], right[r][h]);
  }
}

template <int R>
HWY_INLINE void LoadAcc(const float* st, int64_t stride, Acc<R>& acc) {
  const DF d;
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < kVecs; ++h) acc[r][h] = hn::LoadU(d, st + r * stride + h * kLanes);
  }
}
template <int R>
HWY_INLINE void StoreAcc(float* st, int64_t stride, const Acc<R>& acc) {
  const DF d;
  for (int r = 0; r < R; ++r) {
    for (int h = 0; h < kVecs; ++h) hn::StoreU(acc[r][h], d, st + r * stride + h * kLanes);
  }
}

// dst[i] = x[i] + y[i] for i < n (n a multiple of the lanes).
HWY_INLINE void AddInto(float* dst, const float* x, const float* y, int64_t n) {
  const DF d;
  for (int64_t i = 0; i < n; i += kLanes) {
    hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, dst + i);
  }
}

// Chain L of a lanesK order from zero, for L < n: a loop without a
// zero-trip path, which GCC otherwise keeps the accumulators in memory for.
template <int R, bool kFma>
HWY_INLINE void LeafChain(const float* HWY_RESTRICT a, int64_t lda, const float* HWY_RESTRICT bp,
                          int64_t l, int64_t n, int64_t k, Acc<R>& acc) {
  ZeroAcc<R>(acc);
  int64_t t = l;
  do {
    ChainTerm<R, kFma>(a, lda, bp, t, acc);
    t += k;
  } while (t < n);
}

// Node (W, L) of FoldLanes' tree over K chains: lane L after the fold step
// of width W, lane[L] + lane[L + W] with both taken after step 2W; the root
// (1, 0) is the output. The left operand waits in `held` (one slot of R x
// kPanel floats per level) while the right one is computed: one chain tile
// at a time is in registers, and the k tiles of chains are never stored.
template <int R, bool kFma, int K, int W, int L>
HWY_INLINE void FoldNode(const float* a, int64_t lda, const float* bp, int64_t n, float* held,
                         Acc<R>& out) {
  if constexpr (W == K) {
    LeafChain<R, kFma>(a, lda, bp, L, n, K, out);
  } else {
    {
      Acc<R> left;
      FoldNode<R, kFma, K, 2 * W, L>(a, lda, bp, n, held + R * kPanel, left);
      StoreAcc<R>(held, kPanel, left);
      // Read `left` back from memory after the right operand's loop: GCC
      // would otherwise also keep it in spill slots across that loop.
      asm volatile("" : : "r"(held) : "memory");
    }
    Acc<R> right;
    FoldNode<R, kFma, K, 2 * W, L + W>(a, lda, bp, n, held + R * kPanel, right);
    const DF d;
    for (int r = 0; r < R; ++r) {
      for (int h = 0; h < kVecs; ++h) {
        out[r][h] = hn::Add(hn::LoadU(d, held + r * kPanel + h * kLanes), right[r][h]);
      }
    }
  }
}

// Calls f.template operator()<R>() for the runtime row count 1..Max.
template <int Max, typename F>
HWY_INLINE void DispatchRows(int rows, F&& f) {
  if constexpr (Max >= 1) {
    if (rows == Max) return f.template operator()<Max>();
    DispatchRows<Max - 1>(rows, f);
  }
}

// One task: rows [i0, i1) x columns [j0, j0 + kPanel), all terms.
class Task {
 public:
  Task(const OrderedGemmProblem& p, const ReduceSpec& spec, int64_t i0, int64_t i1, int64_t j0)
      : p_(p), spec_(spec), i0_(i0), rows_(i1 - i0), j0_(j0), s_(ogemm::ThreadScratch()) {}

  void Run() {
    float* out = Grow(s_.out, rows_ * kPanel);
    if (p_.t <= 0) {
      std::fill(out, out + rows_ * kPanel, 0.0f);
    } else if (spec_.order == ReduceOrder::kKahan) {
      Kahan(out);
    } else if (spec_.order == ReduceOrder::kPairwise) {
      if (spec_.fma) Pairwise<true>(0, p_.t, out); else Pairwise<false>(0, p_.t, out);
    } else {
      // As reduce.cc: lane counts other than 4, 8, 16 sum sequentially.
      const int l = spec_.lanes;
      const int lanes =
          spec_.order == ReduceOrder::kLanes && (l == 4 || l == 8 || l == 16) ? l : 1;
      if (p_.c != nullptr && j0_ + kPanel <= p_.n && FoldsInOneChunk(lanes)) {
        // Straight into C: a weight gradient's blocks are not copied again.
        float* c = p_.c + i0_ * p_.ldc + j0_;
        if (spec_.fma) FoldedOneChunk<true>(lanes, c, p_.ldc);
        else FoldedOneChunk<false>(lanes, c, p_.ldc);
        return;
      }
      if (spec_.fma) Lanes<true>(lanes, out); else Lanes<false>(lanes, out);
    }
    p_.store(i0_, i0_ + rows_, j0_, out);
  }

 private:
  // Packs B and fetches A for terms [t0, t1); returns A and sets *ld.
  const float* Load(int64_t t0, int64_t t1, const float** bp, int64_t* ld) {
    float* b = Grow(s_.bpack, (t1 - t0) * kPanel);
    p_.pack_b(j0_, t0, t1, b);
    *bp = b;
    return p_.a(i0_, i0_ + rows_, t0, t1, Grow(s_.apack, rows_ * (t1 - t0)), ld);
  }

  // Sequential (k == 1) or K-lane order: chain l of an output accumulates
  // terms t = l (mod K) in order; chains carry across passes of kLanesChunk
  // terms in `state`.
  template <bool kFma>
  void Lanes(int k, float* out) {
    const int64_t row_stride = k * kPanel;
    if (p_.t <= kLanesChunk) return OneChunkLanes<kFma>(k, out);
    float* st = Grow(s_.state, rows_ * row_stride);
    for (int64_t t0 = 0; t0 < p_.t; t0 += kLanesChunk) {
      const int64_t t1 = std::min(p_.t, t0 + kLanesChunk), n = t1 - t0;
      const float* bp;
      int64_t ld;
      const float* a = Load(t0, t1, &bp, &ld);
      for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kRows, rows_ - r0));
        RowTileChains<kFma>(k, rows, a + r0 * ld, ld, bp, n, t0 > 0, st + r0 * row_stride);
      }
    }
    for (int64_t r = 0; r < rows_; ++r) FoldLanes(st + r * row_stride, k, out + r * kPanel);
  }

  // The k chains of `rows` rows over a chunk's n terms (A rows ld apart, B
  // packed), resumed from st (rows k * kPanel floats apart) or, for the
  // first chunk, started at zero (a chain with no term stays zero, so the
  // state needs no clearing); the chains are stored back to st.
  template <bool kFma>
  static void RowTileChains(int k, int rows, const float* a, int64_t ld, const float* bp,
                            int64_t n, bool resume, float* st) {
    const int64_t row_stride = k * kPanel;
    DispatchRows<kRows>(rows, [&]<int R>() {
      for (int l = 0; l < k; ++l) {
        Acc<R> acc;
        float* s = st + l * kPanel;
        if (resume) LoadAcc<R>(s, row_stride, acc); else ZeroAcc<R>(acc);
        if (l < n) Chain<R, kFma>(a, ld, bp, l, n, k, acc);
        StoreAcc<R>(s, row_stride, acc);
      }
    });
  }

  // SIMD-style horizontal fold of one row's k chains (kPanel floats each,
  // consecutive): lane[l] += lane[l + w] for w = K/2 ... 1, lane[0] to out.
  static void FoldLanes(float* lane, int k, float* out) {
    for (int w = k / 2; w >= 1; w /= 2) {
      for (int l = 0; l < w; ++l) {
        AddInto(lane + l * kPanel, lane + l * kPanel, lane + (l + w) * kPanel, kPanel);
      }
    }
    std::copy(lane, lane + kPanel, out);
  }

  // Lanes for a product whose terms fit one pass: a row tile's chains are
  // complete once computed, so they are folded while they are in L1 rather
  // than kept for all rows (rows x k x 32 floats: 512 KiB for a 512-row
  // task in lanes8, as in the weight gradient of a 512-unit Linear).
  template <bool kFma>
  void OneChunkLanes(int k, float* out) {
    if (FoldsInOneChunk(k)) return FoldedOneChunk<kFma>(k, out, kPanel);
    const int64_t row_stride = k * kPanel, n = p_.t;
    float* st = Grow(s_.state, kRows * row_stride);
    const float* bp;
    int64_t ld;
    const float* a = Load(0, n, &bp, &ld);
    for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, rows_ - r0));
      RowTileChains<kFma>(k, rows, a + r0 * ld, ld, bp, n, false, st);
      for (int r = 0; r < rows; ++r) FoldLanes(st + r * row_stride, k, out + (r0 + r) * kPanel);
    }
  }

  // Whether FoldedOneChunk computes this task: one pass of terms (at most
  // kLanesChunk), and a term for every chain (n >= k).
  bool FoldsInOneChunk(int k) const {
    return (k == 1 || k == 4 || k == 8 || k == 16) && p_.t >= k && p_.t <= kLanesChunk;
  }

  // Row tiles ahead of the one computing whose rows of C are prefetched.
  static constexpr int64_t kPrefetchTiles = 2;

  // Brings the kRows rows of C from row r0 on (those below rows_) into
  // cache before their tile stores them: a weight gradient's C (6 MiB for
  // mlp's first layer) was last read by the previous step's optimizer and
  // has left the caches, and each 128-byte row then waited for its lines.
  void PrefetchOutput(const float* out, int64_t ldo, int64_t r0) const {
    for (int64_t r = r0; r < std::min<int64_t>(r0 + kRows, rows_); ++r) {
      const float* row = out + r * ldo;
      hwy::Prefetch(row);
      hwy::Prefetch(row + 16);
      hwy::Prefetch(row + kPanel - 1);
    }
  }

  // OneChunkLanes with each row tile's chains folded as they complete
  // (FoldNode); rows of the output go to out, ldo floats apart. Storing all
  // k tiles of chains and folding them back from L1 took about a quarter of
  // the time of mlp's weight gradients under torch (lanes8, 128 terms);
  // folding in registers ran those products 4-15% faster on Zen 4.
  // Sequential chains (k = 1) take it too: one chain tile, stored once.
  template <bool kFma>
  void FoldedOneChunk(int k, float* out, int64_t ldo) {
    const int64_t n = p_.t;
    HWY_ALIGN float held[4 * kRows * kPanel];
    const float* bp;
    int64_t ld;
    const float* a = Load(0, n, &bp, &ld);
    for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, rows_ - r0));
      if (ldo != kPanel) PrefetchOutput(out, ldo, r0 + kPrefetchTiles * kRows);
      DispatchRows<kRows>(rows, [&]<int R>() {
        Acc<R> acc;
        const float* ar = a + r0 * ld;
        if (k == 1) {
          FoldNode<R, kFma, 1, 1, 0>(ar, ld, bp, n, held, acc);
        } else if (k == 4) {
          FoldNode<R, kFma, 4, 1, 0>(ar, ld, bp, n, held, acc);
        } else if (k == 8) {
          FoldNode<R, kFma, 8, 1, 0>(ar, ld, bp, n, held, acc);
        } else {
          FoldNode<R, kFma, 16, 1, 0>(ar, ld, bp, n, held, acc);
        }
        StoreAcc<R>(out + r0 * ldo, ldo, acc);
      });
    }
  }

  void Kahan(float* out) {
    float* sum = Grow(s_.state, 2 * rows_ * kPanel);
    float* comp = sum + rows_ * kPanel;
    std::fill(sum, sum + 2 * rows_ * kPanel, 0.0f);
    for (int64_t t0 = 0; t0 < p_.t; t0 += kChunk) {
      const int64_t t1 = std::min(p_.t, t0 + kChunk);
      const float* bp;
      int64_t ld;
      const float* a = Load(t0, t1, &bp, &ld);
      for (int64_t r0 = 0; r0 < rows_; r0 += kKahanRows) {
        const int rows = static_cast<int>(std::min<int64_t>(kKahanRows, rows_ - r0));
        DispatchRows<kKahanRows>(rows, [&]<int R>() {
          Acc<R> s, c;
          LoadAcc<R>(sum + r0 * kPanel, kPanel, s);
          LoadAcc<R>(comp + r0 * kPanel, kPanel, c);
          KahanChain<R>(a + r0 * ld, ld, bp, t1 - t0, s, c);
          StoreAcc<R>(sum + r0 * kPanel, kPanel, s);
          StoreAcc<R>(comp + r0 * kPanel, kPanel, c);
        });
      }
    }
    AddInto(out, sum, comp, rows_ * kPanel);
  }

  // The pairwise tree over [t0, t1): subtrees that fit a chunk are summed in
  // registers, larger ones split exactly as reduce.cc does (n/2 rounded down).
  template <bool kFma>
  void Pairwise(int64_t t0, int64_t t1, float* out) {
    const int64_t n = t1 - t0;
    if (n > kChunk) {
      const int64_t mid = t0 + n / 2;
      ScratchFloats right(rows_ * kPanel);
      Pairwise<kFma>(t0, mid, out);
      Pairwise<kFma>(mid, t1, right.data());
      AddInto(out, out, right.data(), rows_ * kPanel);
      return;
    }
    const float* bp;
    int64_t ld;
    const float* a = Load(t0, t1, &bp, &ld);
    for (int64_t r0 = 0; r0 < rows_; r0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, rows_ - r0));
      DispatchRows<kRows>(rows, [&]<int R>() {
        Acc<R> acc;
        PairwiseBlock<R, kFma>(a + r0 * ld, ld, bp, 0, n, acc);
        StoreAcc<R>(out + r0 * kPanel, kPanel, acc);
      });
    }
  }

  const OrderedGemmProblem& p_;
  const ReduceSpec& spec_;
  int64_t i0_, rows_, j0_;
  Scratch& s_;
};

void RunTaskAtWidth(const OrderedGemmProblem& p, const ReduceSpec& spec, int64_t i0,
                    int64_t i1, int64_t j0) {
  Task(p, spec, i0, i1, j0).Run();
}

}  // namespace
