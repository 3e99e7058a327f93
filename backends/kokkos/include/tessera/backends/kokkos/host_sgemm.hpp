#pragma once
// The Kokkos backend's own fp32 matrix product on the host, for the convolutions' tiles
// (conv_host_tiles.cpp): one call per tile on the calling thread, the threads being Kokkos'.
//
// Why Tessera has one: the host BLAS is whatever the machine has, built for whatever CPU its
// packager or environment chose (an OPENBLAS_CORETYPE=Haswell, a reference BLAS), and measured
// on an AVX-512 EPYC the conv tiles reached 0.22–0.44 of the FMA peak through it. This one is
// compiled for each x86-64 instruction set (AVX-512, AVX2+FMA) and for the build's own target,
// and picks the widest the CPU runs, as OpenBLAS' dynamic-arch builds and oneDNN do.
//
// The shape is the classic register-blocked one (Goto's): B cut into panels nr wide, packed once
// and shared by every tile; A packed per block of mr rows and k-slice; an mr × nr block of C held
// in vector registers while a k-slice of A and B streams through them. Every element of C is a
// sum in a fixed order (k-slices in turn, each slice in order), whatever the threads: the bits
// do not depend on how many there are.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/backends/kokkos/host_sgemm_segment.hpp"

namespace tessera::kokkos_backend::host_sgemm {

/// An instruction set the kernel is compiled for. `build` is the compiler's target for Tessera's
/// host code (SSE2 on a generic x86-64 build, NEON on aarch64, whatever TESSERA_HOST_ARCH says).
enum class Isa { build, avx2, avx512 };
std::string name(Isa isa);
/// The instruction sets this build has a kernel for and this CPU runs, widest last.
std::vector<Isa> runnable();
/// The widest of runnable().
Isa widest();

/// A kernel: its instruction set and register block (rows of A × columns of B).
struct Kernel {
  Isa isa = Isa::build;
  int mr = 0, nr = 0;
};
/// The kernel for products whose B has `n` columns (a narrow B gets a narrower block).
Kernel choose(Isa isa, int64_t n);

/// Floats pack_b writes for a k × n matrix B.
int64_t packed_b_size(const Kernel& kernel, int64_t k, int64_t n);
/// B (k × n, B(p, j) = b[p·row_stride + j·col_stride]) as the kernel's panels: nr columns
/// each, zero-padded past n.
void pack_b(const Kernel& kernel, int64_t k, int64_t n, const float* b, int64_t row_stride, int64_t col_stride,
            float* panels);

/// C (m × n, row-major with leading dimension ldc) = (accumulate ? C : 0) + A·B, where
/// A(i, p) = a[i·a_row_stride + p·a_col_stride] and B is packed by pack_b with the same kernel.
/// Runs on the calling thread; calls from several threads at once are fine.
void multiply(const Kernel& kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row_stride,
              int64_t a_col_stride, const float* panels, float* c, int64_t ldc, bool accumulate);

/// C (m × n) (+)= Σ over the segments of rows[i][a_offset + t] · B(b_row + t, ·): an implicit
/// product whose A is never built. A convolution's output position i reads its window in place
/// from a zero-padded input (rows[i] its window's corner, a segment a line of the window), so
/// no column matrix is written and read back. B is packed by pack_b (k rows).
void multiply_gathered(const Kernel& kernel, int64_t m, int64_t n, const float* const* rows,
                       const Segment* segments, int64_t segment_count, const float* panels, int64_t k, float* c,
                       int64_t ldc, bool accumulate);

/// C (m × n) (+)= A · B with A(i, p) = a[p·a_col_stride + i] and B's row p read in place at
/// b_rows[p] + b_offset: a convolution's weight gradient, the output gradient's channels times
/// one window line of every position, read from the padded input without a column matrix.
/// Reads up to kernel.nr - 1 values past each row's n (the caller leaves them readable).
void multiply_gathered_b(const Kernel& kernel, int64_t m, int64_t n, int64_t k, const float* a, int64_t a_col_stride,
                         const float* const* b_rows, int64_t b_offset, float* c, int64_t ldc, bool accumulate);

}  // namespace tessera::kokkos_backend::host_sgemm
