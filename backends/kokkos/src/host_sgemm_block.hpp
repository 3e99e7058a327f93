#pragma once
// The register-blocked kernel behind host_sgemm.hpp, written once with GCC/Clang vector types
// and compiled once per instruction set: each host_sgemm_<isa>.cpp includes it under its own
// -m flags. Everything here has internal linkage (an anonymous namespace, no templates of the
// standard library), so no AVX-512 copy of a function can stand in for the generic one at link
// time and reach a CPU without AVX-512.
#include <cstdint>

#include "host_sgemm_variants.hpp"

// Full unrolling keeps a block's sums in registers; nvcc (whose front end parses this in a CUDA
// build, where only the build's own kernel is compiled and never run) knows no GCC pragmas.
#if defined(__GNUC__) && !defined(__CUDACC__)
#define TESSERA_PRAGMA(x) _Pragma(#x)
#define TESSERA_UNROLL(n) TESSERA_PRAGMA(GCC unroll n)
#else
#define TESSERA_UNROLL(n)
#endif

namespace tessera::kokkos_backend::host_sgemm::variants {
namespace {

// A k-slice: B's slice of one panel (kSlice × nr floats, 24 KiB at nr = 32) stays in a 32 KiB
// L1 while the packed rows of A stream past it.
constexpr int64_t kSlice = 192;

/// An mr × (nv vectors) block of C in registers; V a vector of W floats.
template <class V, int MR, int NV>
struct RegisterBlock {
  static constexpr int W = static_cast<int>(sizeof(V) / sizeof(float));
  static constexpr int kRows = MR;
  static constexpr int NR = W * NV;

  static V load(const float* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, V v) { __builtin_memcpy(p, &v, sizeof v); }
  /// Every lane a. a - 0 is a for every a (under round-to-nearest), so the compiler drops
  /// the subtraction and broadcasts; V{} + a kept a scalar add before every broadcast, since
  /// 0 + a is not a when a is -0 (a dependent instruction per FMA).
  static V splat(float a) { return a - V{}; }

  /// A's rows [0, mr) of a k-slice as the kernel reads them: ap[p·MR + i], zero past mr.
  static void pack_a(int64_t kc, int mr, const float* a, int64_t ras, int64_t cas, float* ap) {
    if (cas == 1) {
      for (int i = 0; i < mr; ++i)
        for (int64_t p = 0; p < kc; ++p) ap[p * MR + i] = a[i * ras + p];
    } else {
      for (int64_t p = 0; p < kc; ++p)
        for (int i = 0; i < mr; ++i) ap[p * MR + i] = a[i * ras + p * cas];
    }
    for (int i = mr; i < MR; ++i)
      for (int64_t p = 0; p < kc; ++p) ap[p * MR + i] = 0.0f;
  }

  // How the kernel reads A(i, p): from the packed block, or in place, from rows that are
  // contiguous in p (the convolutions' column matrices) or columns contiguous in i (the output
  // gradient of a weight gradient). Reading in place saves a transposing copy of A, which cost
  // as much as the product itself where B is one vector wide (16 output channels).
  struct PackedA {
    const float* ap;
    float operator()(int i, int64_t p) const { return ap[p * MR + i]; }
  };
  struct RowsOfA {
    const float* row[MR];
    float operator()(int i, int64_t p) const { return row[i][p]; }
  };
  struct ColumnsOfA {
    const float* a;
    int64_t col_stride;
    float operator()(int i, int64_t p) const { return a[p * col_stride + i]; }
  };

  using Sums = V[MR][NV];

  // How the kernel reads B's row p: packed panels (bp + p·NR), or gathered, each row where a
  // pointer says (a convolution's window line, for the weight gradient).
  struct PackedB {
    const float* bp;
    const float* row(int64_t p) const { return bp + p * NR; }
  };
  struct GatheredB {
    const float* const* rows;
    int64_t offset;
    const float* row(int64_t p) const { return rows[p] + offset; }
  };
  /// A(i, p) = a[p·col_stride + i] for i < mr, row mr - 1 past it: a block's last rows never
  /// read past A's end.
  struct ClampedColumnsOfA {
    const float* a;
    int64_t col_stride;
    int mr;
    float operator()(int i, int64_t p) const { return a[p * col_stride + (i < mr ? i : mr - 1)]; }
  };

  /// s += A · B over kc values of p.
  template <class ReadA, class ReadB>
  static void add_products(Sums& s, int64_t kc, const ReadA& a, const ReadB& rb) {
    for (int64_t p = 0; p < kc; ++p) {
      const float* bp = rb.row(p);
      V b[NV];
TESSERA_UNROLL(4)
      for (int v = 0; v < NV; ++v) b[v] = load(bp + v * W);
TESSERA_UNROLL(32)
      for (int i = 0; i < MR; ++i) {
        const V x = splat(a(i, p));
TESSERA_UNROLL(4)
        for (int v = 0; v < NV; ++v) s[i][v] += x * b[v];
      }
    }
  }

  static void clear(Sums& s) {
TESSERA_UNROLL(32)
    for (int i = 0; i < MR; ++i)
TESSERA_UNROLL(4)
      for (int v = 0; v < NV; ++v) s[i][v] = V{};
  }

  /// C[0:mr, 0:nr] (+)= s.
  static void store_block(const Sums& s, float* c, int64_t ldc, int mr, int nr, bool accumulate) {
    if (mr == MR && nr == NR) {
TESSERA_UNROLL(32)
      for (int i = 0; i < MR; ++i)
TESSERA_UNROLL(4)
        for (int v = 0; v < NV; ++v) {
          float* out = c + i * ldc + v * W;
          store(out, accumulate ? load(out) + s[i][v] : s[i][v]);
        }
      return;
    }
    float block[MR][NR];
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) store(&block[i][v * W], s[i][v]);
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nr; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + block[i][j] : block[i][j];
  }

  /// C[0:mr, 0:nr] (+)= A · Bp over one k-slice.
  template <class ReadA>
  static void kernel(int64_t kc, const ReadA& a, const float* bp, float* c, int64_t ldc, int mr, int nr,
                     bool accumulate) {
    Sums s;
    clear(s);
    add_products(s, kc, a, PackedB{bp});
    store_block(s, c, ldc, mr, nr, accumulate);
  }

  /// One block of MR rows over every panel of one k-slice.
  template <class ReadA>
  static void block_row(const Product& q, int64_t p0, int64_t kc, int64_t i0, int mr, bool accumulate,
                        const ReadA& a) {
    const int64_t panels = (q.n + NR - 1) / NR;
    for (int64_t j = 0; j < panels; ++j) {
      const int nr = static_cast<int>(q.n - j * NR < NR ? q.n - j * NR : NR);
      kernel(kc, a, q.panels + (j * q.k + p0) * NR, q.c + i0 * q.ldc + j * NR, q.ldc, mr, nr, accumulate);
    }
  }

  static void multiply(const Product& q) {
    alignas(64) float ap[MR * kSlice];
    if (q.k == 0) {
      if (!q.accumulate)
        for (int64_t i = 0; i < q.m; ++i)
          for (int64_t j = 0; j < q.n; ++j) q.c[i * q.ldc + j] = 0.0f;
      return;
    }
    for (int64_t p0 = 0; p0 < q.k; p0 += kSlice) {
      const int64_t kc = q.k - p0 < kSlice ? q.k - p0 : kSlice;
      const bool accumulate = q.accumulate || p0 > 0;
      for (int64_t i0 = 0; i0 < q.m; i0 += MR) {
        const int mr = static_cast<int>(q.m - i0 < MR ? q.m - i0 : MR);
        const float* a = q.a + i0 * q.a_row_stride + p0 * q.a_col_stride;
        if (mr == MR && q.a_col_stride == 1) {
          RowsOfA rows;
          for (int i = 0; i < MR; ++i) rows.row[i] = a + i * q.a_row_stride;
          block_row(q, p0, kc, i0, mr, accumulate, rows);
        } else if (mr == MR && q.a_row_stride == 1) {
          block_row(q, p0, kc, i0, mr, accumulate, ColumnsOfA{a, q.a_col_stride});
        } else {  // the last rows, or A in neither layout: packed, zero past mr
          pack_a(kc, mr, a, q.a_row_stride, q.a_col_stride, ap);
          block_row(q, p0, kc, i0, mr, accumulate, PackedA{ap});
        }
      }
    }
  }

  /// The gathered product (host_sgemm::multiply_gathered): each block of MR rows keeps its sums
  /// in registers across every segment, so a convolution's window is read in place, line by
  /// line, and C is written once.
  static void multiply_gathered(const GatheredProduct& q) {
    const int64_t panels = (q.n + NR - 1) / NR;
    for (int64_t i0 = 0; i0 < q.m; i0 += MR) {
      const int mr = static_cast<int>(q.m - i0 < MR ? q.m - i0 : MR);
      // Past the last row, the last row again (its sums are not stored): no read outside A.
      const float* row[MR];
      for (int i = 0; i < MR; ++i) row[i] = q.rows[i0 + (i < mr ? i : mr - 1)];
      for (int64_t j = 0; j < panels; ++j) {
        const int nr = static_cast<int>(q.n - j * NR < NR ? q.n - j * NR : NR);
        Sums s;
        clear(s);
        for (int64_t g = 0; g < q.segment_count; ++g) {
          const Segment& seg = q.segments[g];
          RowsOfA a;
          for (int i = 0; i < MR; ++i) a.row[i] = row[i] + seg.a_offset;
          add_products(s, seg.length, a, PackedB{q.panels + (j * q.k + seg.b_row) * NR});
        }
        store_block(s, q.c + i0 * q.ldc + j * NR, q.ldc, mr, nr, q.accumulate);
      }
    }
  }

  /// The product with gathered B (host_sgemm::multiply_gathered_b): B's columns in blocks of NR
  /// read straight from each row's pointer (a block may read up to NR - 1 values past n, whose
  /// sums are not stored).
  static void multiply_gathered_b(const GatheredBProduct& q) {
    for (int64_t i0 = 0; i0 < q.m; i0 += MR) {
      const int mr = static_cast<int>(q.m - i0 < MR ? q.m - i0 : MR);
      for (int64_t j0 = 0; j0 < q.n; j0 += NR) {
        const int nr = static_cast<int>(q.n - j0 < NR ? q.n - j0 : NR);
        const GatheredB b{q.b_rows, q.b_offset + j0};
        Sums s;
        clear(s);
        if (mr == MR)
          add_products(s, q.k, ColumnsOfA{q.a + i0, q.a_col_stride}, b);
        else
          add_products(s, q.k, ClampedColumnsOfA{q.a + i0, q.a_col_stride, mr}, b);
        store_block(s, q.c + i0 * q.ldc + j0, q.ldc, mr, nr, q.accumulate);
      }
    }
  }
};

}  // namespace
}  // namespace tessera::kokkos_backend::host_sgemm::variants

// The entry points a variant file exports (host_sgemm_variants.hpp) for its instruction set
// `isa`, over the Wide and Narrow register blocks it defines.
#define TESSERA_HOST_SGEMM_VARIANT(isa)                                                                 \
  Shape shape_##isa(bool wide) {                                                                       \
    return wide ? Shape{Wide::kRows, Wide::NR} : Shape{Narrow::kRows, Narrow::NR};                     \
  }                                                                                                    \
  void multiply_##isa(const Product& q, bool wide) { wide ? Wide::multiply(q) : Narrow::multiply(q); } \
  void multiply_gathered_##isa(const GatheredProduct& q, bool wide) {                                  \
    wide ? Wide::multiply_gathered(q) : Narrow::multiply_gathered(q);                                  \
  }                                                                                                    \
  void multiply_gathered_b_##isa(const GatheredBProduct& q, bool wide) {                               \
    wide ? Wide::multiply_gathered_b(q) : Narrow::multiply_gathered_b(q);                              \
  }
