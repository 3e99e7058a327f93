#pragma once
// The kernels of the BCPNN layer (layers/bcpnn.hpp) besides its two matrix products, which go
// to the inner-product op of the chosen backend: input encoding, the softmax inside each
// hypercolumn, the Bayesian weights and biases derived from the probability traces, and the
// mutual information that structural plasticity ranks connections by. All are maps and
// reductions over the trace matrices with no vendor op to prefer, so every build runs these
// Kokkos kernels.
//
// Layouts: activations [N, units] with a hypercolumn's minicolumns adjacent; the joint trace
// and the weights [outputs, inputs] (the inner-product op's layout, y = x·wᵀ + b); the
// connection mask [output hypercolumns, input hypercolumns], 1 connected, 0 not.
#include <cstdint>

#include "tessera/core/tensor.hpp"

namespace tessera::kokkos_backend {

/// out[n, 2f] = x[n, f], out[n, 2f + 1] = 1 − x[n, f]: each input value in [0, 1] becomes a
/// hypercolumn of two complementary minicolumns. x [N, F] and out [N, 2F], of any element types.
void complementary_encode(const Tensor& x, const Tensor& out);

/// y[n, h·M + m] = exp(s[n, h·M + m]) / Σ_k exp(s[n, h·M + k]) over each hypercolumn h of
/// `minicolumns` (M) units; s and y [N, H·M] of any element types (computed in fp32), may be
/// the same tensor.
void hypercolumn_softmax(const Tensor& support, int64_t minicolumns, const Tensor& y);

/// sums[f] = Σ_n x[n, f] for x [N, F] of any element type; sums fp32 [F]. Summed in double in
/// a fixed order.
void column_sums(const Tensor& x, const Tensor& sums);

/// The settings of bcpnn_weights and bcpnn_bias.
struct BcpnnTraceSettings {
  int64_t input_minicolumns = 2, output_minicolumns = 1;
  float eps = 1e-4f;  // keeps log finite where a trace is 0
};

/// w[j, i] = log((p_ij[j, i] + ε²) / ((p_i[i] + ε)(p_j[j] + ε))) where the hypercolumns of j
/// and i are connected (mask 1), else 0. All fp32.
void bcpnn_weights(const Tensor& p_i, const Tensor& p_j, const Tensor& p_ij, const Tensor& mask,
                   const BcpnnTraceSettings& s, const Tensor& w);

/// The joint trace's step and the weights that follow from it, in one pass over the two
/// largest arrays: p_ij ← (1 − rate)·p_ij + scale·s_ij (then kept as `trace_type` keeps it,
/// see round_to), and w from the new p_ij as bcpnn_weights computes it, with p_i and p_j
/// already moved, where the mask connects; w stays as it is elsewhere (0 since the last
/// bcpnn_weights: call that after the mask changes). All fp32; one work item per output unit
/// j, its inputs in a row.
void bcpnn_joint_step(const Tensor& s_ij, float rate, float scale, ElementType trace_type, const Tensor& p_i,
                      const Tensor& p_j, const Tensor& p_ij, const Tensor& mask, const BcpnnTraceSettings& s,
                      const Tensor& w);

/// Bias regulation (Podobas et al. 2021, after Ravichandran et al.): a unit's bias gain
/// k_β[j] relaxes at `rate` towards
///   k(p) = k_half                                   if p < p_min/4,
///   k(p) = max(k_half, 1 + (k_half − 1)(p_min/4)² / (p − p_min/4)²)   otherwise,
/// so a unit used less than p_min/4 gets a gain of k_half (negative: its log p_j bias then
/// favours it) and a well-used unit a gain near 1.
struct BiasRegulation {
  float k_half = 1.0f;  // 1: no regulation (k_β stays 1)
  float p_min = 0.0f;
  float rate = 0.0f;
};

/// k_beta[j] ← (1 − rate)·k_beta[j] + rate·k(p_j[j]) (BiasRegulation), then
/// b[j] = k_beta[j]·log(p_j[j] + ε). All fp32.
void bcpnn_bias(const Tensor& p_j, const BiasRegulation& regulation, const BcpnnTraceSettings& s,
                const Tensor& k_beta, const Tensor& b);

/// mi[h, g] = Σ_{j ∈ h} Σ_{i ∈ g} P_ij·log(P_ij / (P_i·P_j)) with P_ij = p_ij + ε²,
/// P_i = p_i + ε, P_j = p_j + ε: the mutual information between output hypercolumn h and
/// input hypercolumn g that the traces estimate, whether or not they are connected. mi fp32
/// [H_out, H_in]; each entry summed in double in a fixed order.
void hypercolumn_mutual_information(const Tensor& p_i, const Tensor& p_j, const Tensor& p_ij,
                                    const BcpnnTraceSettings& s, const Tensor& mi);

/// Rounds every value of the fp32 tensor t to the nearest value of `type` (bf16 or fp16, ties
/// to even), keeping it in fp32: what storing the traces in that type keeps of them.
void round_to(const Tensor& t, ElementType type);

/// p_ij[j, i] = p_i[i]·p_j[j]·(1 + noise·u) with u uniform in [−1, 1) from the counter-based
/// RNG (seed, stream, j·inputs + i): the start of the joint trace, a little off independence so
/// that the units of a hypercolumn do not stay alike. fp32.
void jittered_joint_trace(const Tensor& p_i, const Tensor& p_j, float noise, uint64_t seed, uint64_t stream,
                          const Tensor& p_ij);

}  // namespace tessera::kokkos_backend
