#include "few_channel_weight_gradient.hpp"

#include <algorithm>

#include "descriptors.hpp"
#include "tessera/core/half_float.hpp"
#include "tessera/core/kokkos_compat.hpp"

// Unrolled loops keep the taps' sums in registers; the host pass knows no such pragma.
#if defined(__CUDA_ARCH__)
#define TESSERA_UNROLL _Pragma("unroll")
#else
#define TESSERA_UNROLL
#endif

namespace tessera::cudnn_backend {
namespace {

constexpr int max_teams = 2048;
constexpr int rows_per_team_at_least = 2;

/// The sizes the kernel reads, as ints (serves() checked that they fit, as cuDNN's do).
struct Sizes {
  int n, d, h, w, c, od, oh, ow, k;
  int sd, sh, sw, pd, ph, pw, dd, dh, dw;
};

Sizes sizes_of(const ops::ConvGeometry& g) {
  const auto o = g.out_size();
  auto i = [](int64_t v) { return static_cast<int>(v); };
  return {i(g.batch),     i(g.in_size[0]),  i(g.in_size[1]),  i(g.in_size[2]),  i(g.in_channels),
          i(o[0]),        i(o[1]),          i(o[2]),          i(g.out_channels), i(g.stride[0]),
          i(g.stride[1]), i(g.stride[2]),   i(g.padding[0]),  i(g.padding[1]),  i(g.padding[2]),
          i(g.dilation[0]), i(g.dilation[1]), i(g.dilation[2])};
}

// x and dy are read as floats, or as 16-bit patterns of `type` widened exactly; the sums are fp32.
KOKKOS_INLINE_FUNCTION float load(float v, ElementType) { return v; }
KOKKOS_INLINE_FUNCTION float load(uint16_t v, ElementType type) { return half_float::from_half(v, type); }

/// Each team's partial sums over its range of output rows (sample, depth, height), KD x KH x
/// KW taps, KPT output channels per thread (reusing each x value KPT times). Per row the
/// taps' x row offsets are found once; along the row only the width is checked.
template <int KD, int KH, int KW, int KPT, class E>
void partial_sums(const Sizes s, int teams, int team_size, const E* x, const E* dy, ElementType type,
                  float* partials) {
  constexpr int taps = KD * KH * KW;
  const int rows = s.n * s.od * s.oh;
  const int per_team = (rows + teams - 1) / teams;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "tessera::cudnn_few_channel_weight_gradient", Policy(teams, team_size),
      KOKKOS_LAMBDA(const Policy::member_type& team) {
        const int t = team.team_rank();
        if (t >= s.k / KPT * s.c) return;
        const int k = t / s.c * KPT, c = t % s.c;
        float sum[KPT][taps];
        TESSERA_UNROLL
        for (int j = 0; j < KPT; ++j) {
          TESSERA_UNROLL
          for (int r = 0; r < taps; ++r) sum[j][r] = 0.0f;
        }
        const int begin = team.league_rank() * per_team;
        const int end = begin + per_team < rows ? begin + per_team : rows;
        for (int row = begin; row < end; ++row) {
          const int oh = row % s.oh, od = row / s.oh % s.od, n = row / s.oh / s.od;
          int base[KD * KH];  // x offset of each (depth, height) tap's row, -1 outside
          TESSERA_UNROLL
          for (int a = 0; a < KD; ++a) {
            const int d = od * s.sd - s.pd + a * s.dd;
            TESSERA_UNROLL
            for (int b = 0; b < KH; ++b) {
              const int h = oh * s.sh - s.ph + b * s.dh;
              base[a * KH + b] = d >= 0 && d < s.d && h >= 0 && h < s.h ? ((n * s.d + d) * s.h + h) * s.w : -1;
            }
          }
          for (int ow = 0; ow < s.ow; ++ow) {
            const E* g = dy + (static_cast<int64_t>(row) * s.ow + ow) * s.k + k;
            float gk[KPT];
            TESSERA_UNROLL
            for (int j = 0; j < KPT; ++j) gk[j] = load(g[j], type);
            TESSERA_UNROLL
            for (int e = 0; e < KW; ++e) {
              const int w = ow * s.sw - s.pw + e * s.dw;
              if (w < 0 || w >= s.w) continue;
              TESSERA_UNROLL
              for (int ab = 0; ab < KD * KH; ++ab) {
                if (base[ab] < 0) continue;
                const float v = load(x[(base[ab] + w) * s.c + c], type);
                TESSERA_UNROLL
                for (int j = 0; j < KPT; ++j) sum[j][ab * KW + e] += gk[j] * v;
              }
            }
          }
        }
        float* out = partials + static_cast<int64_t>(team.league_rank()) * s.k * taps * s.c;
        TESSERA_UNROLL
        for (int j = 0; j < KPT; ++j) {
          TESSERA_UNROLL
          for (int r = 0; r < taps; ++r) out[((k + j) * taps + r) * s.c + c] = sum[j][r];
        }
      });
}

}  // namespace

bool FewChannelWeightGradient::serves(const ops::ConvGeometry& g) {
  const bool k333 = g.spatial_rank == 3 && g.kernel == std::array<int64_t, 3>{3, 3, 3};
  const bool k33 = g.spatial_rank == 2 && g.kernel == std::array<int64_t, 3>{1, 3, 3};
  return (k333 || k33) && g.out_channels * g.in_channels <= 512 && fits_in_int(g.input_shape().numel()) &&
         fits_in_int(g.output_shape().numel());
}

FewChannelWeightGradient::FewChannelWeightGradient(const ops::ConvGeometry& g)
    : g_(g),
      teams_(static_cast<int>(std::clamp<int64_t>(g.output_shape().numel() / g.out_channels /
                                                       (g.out_size()[2] * rows_per_team_at_least),
                                                   1, max_teams))),
      team_size_(static_cast<int>((g.out_channels / (g.out_channels % 2 == 0 ? 2 : 1) * g.in_channels + 31) / 32 * 32)),
      partials_(Shape{teams_, g.weight_shape().numel()}, "tessera::cudnn_weight_gradient_partials") {}

/// The kernel for the geometry's shape, on x and dy of element type E.
template <class E>
void partial_sums_of(const ops::ConvGeometry& g, int teams, int team_size, const E* x, const E* dy,
                     float* partials) {
  const Sizes s = sizes_of(g);
  const bool pairs = s.k % 2 == 0;  // two output channels per thread where they pair up
  const ElementType type = g.type;
  if (g.spatial_rank == 3 && pairs)
    partial_sums<3, 3, 3, 2>(s, teams, team_size, x, dy, type, partials);
  else if (g.spatial_rank == 3)
    partial_sums<3, 3, 3, 1>(s, teams, team_size, x, dy, type, partials);
  else if (pairs)
    partial_sums<1, 3, 3, 2>(s, teams, team_size, x, dy, type, partials);
  else
    partial_sums<1, 3, 3, 1>(s, teams, team_size, x, dy, type, partials);
}

void FewChannelWeightGradient::run(const Tensor& x, const Tensor& dy, const Tensor& dw) const {
  float* partials = partials_.data();
  if (g_.type == ElementType::fp32)
    partial_sums_of(g_, teams_, team_size_, x.data(), dy.data(), partials);
  else
    partial_sums_of(g_, teams_, team_size_, x.half_view().data(), dy.half_view().data(), partials);
  // The teams' sums added in team order: the same result every run.
  const int teams = teams_;
  const int64_t n = dw.numel();
  float* out = dw.data();
  Kokkos::parallel_for(
      "tessera::cudnn_few_channel_weight_gradient_sum", RangePolicy(0, n), KOKKOS_LAMBDA(const int64_t i) {
        float total = 0.0f;
        for (int t = 0; t < teams; ++t) total += partials[t * n + i];
        out[i] = total;
      });
}

}  // namespace tessera::cudnn_backend
