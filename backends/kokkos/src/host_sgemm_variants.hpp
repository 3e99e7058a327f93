#pragma once
// What each host_sgemm_<isa>.cpp exports to the dispatcher (host_sgemm.cpp).
#include <cstdint>

#include "tessera/backends/kokkos/host_sgemm_segment.hpp"

namespace tessera::kokkos_backend::host_sgemm::variants {

using host_sgemm::Segment;

/// One product C (+)= A·B, B packed in panels of the variant's nr.
struct Product {
  int64_t m, n, k;
  const float* a;
  int64_t a_row_stride, a_col_stride;
  const float* panels;
  float* c;
  int64_t ldc;
  bool accumulate;
};

/// C (m × n) (+)= Σ over segments of rows[i][a_offset + t] · B(b_row + t, ·), t < length.
struct GatheredProduct {
  int64_t m, n, k;
  const float* const* rows;
  const Segment* segments;
  int64_t segment_count;
  const float* panels;
  float* c;
  int64_t ldc;
  bool accumulate;
};

/// C (m × n) (+)= Σ_{p < k} a[p·a_col_stride + i] · b_rows[p][b_offset + j].
struct GatheredBProduct {
  int64_t m, n, k;
  const float* a;
  int64_t a_col_stride;
  const float* const* b_rows;
  int64_t b_offset;
  float* c;
  int64_t ldc;
  bool accumulate;
};

/// A variant's register block: `wide` for B of more than one vector's columns.
struct Shape {
  int mr, nr;
};

Shape shape_build(bool wide);
void multiply_build(const Product& q, bool wide);
void multiply_gathered_build(const GatheredProduct& q, bool wide);
void multiply_gathered_b_build(const GatheredBProduct& q, bool wide);
#if defined(TESSERA_HOST_SGEMM_X86)
Shape shape_avx2(bool wide);
void multiply_avx2(const Product& q, bool wide);
void multiply_gathered_avx2(const GatheredProduct& q, bool wide);
void multiply_gathered_b_avx2(const GatheredBProduct& q, bool wide);
Shape shape_avx512(bool wide);
void multiply_avx512(const Product& q, bool wide);
void multiply_gathered_avx512(const GatheredProduct& q, bool wide);
void multiply_gathered_b_avx512(const GatheredBProduct& q, bool wide);
#endif

}  // namespace tessera::kokkos_backend::host_sgemm::variants
