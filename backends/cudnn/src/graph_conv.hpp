#pragma once
// One pass of a convolution through cuDNN's graph API (the backend descriptors of
// cudnn_graph.h): an operation graph holding the single convolution, the engine
// configurations cuDNN's heuristics rank for it, and the execution plan chosen among them.
//
// Why a second API beside the legacy calls of conv_op.cpp: measured on an H200, the legacy
// calls run cosmoflow-small's bf16 backward-data at 0.3 TFLOP/s (no tensor-core engine behind
// them for that case) and its fp16 passes at 4-23 TFLOP/s, while PyTorch, which builds graphs,
// trains the same network 8-10x faster (docs/gpu.md). The graph API reaches every engine,
// including the runtime-compiled ones. Private to the cuDNN backend.
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "context.hpp"
#include "tessera/ops/conv.hpp"

namespace tessera::cudnn_backend {

/// One cuDNN backend descriptor, destroyed with the object.
class BackendDescriptor {
 public:
  BackendDescriptor(cudnnBackendDescriptorType_t type, const char* what);
  ~BackendDescriptor();
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

/// The pass of a convolution a graph computes, and its three tensors in the order its calls
/// take them: forward (x, w -> y), data (dy, w -> dx), filter (x, dy -> dw).
enum class GraphPass { forward, data, filter };

/// What an algorithm search (the legacy calls' or a graph's engines) may take: tensor-core math
/// (for fp32 data: TF32), and non-deterministic sums. Nothing that reduces in less than fp32.
struct AlgorithmSearch {
  bool tensor_ops = false;
  bool deterministic = true;
};

class GraphConv {
 public:
  /// Builds the operation graph of `pass` for `g` (channels-last tensors of g.type, fp32
  /// accumulation) and asks cuDNN's heuristics for its engine configurations. Throws Error when
  /// cuDNN refuses the graph.
  GraphConv(cudnnHandle_t handle, const ops::ConvGeometry& g, GraphPass pass, const AlgorithmSearch& search);
  ~GraphConv();
  GraphConv(const GraphConv&) = delete;
  GraphConv& operator=(const GraphConv&) = delete;

  /// Takes the first configuration, in cuDNN's order, that builds a plan allowed by the search
  /// and whose workspace fits `limit`; false when none does.
  bool plan_first(size_t limit);
  /// Times every allowed configuration that builds within `limit` (up to `at_most` of them) on
  /// the given buffers (the output is overwritten, as the call itself will) and keeps the
  /// fastest; returns its time in milliseconds, or a negative value when none builds.
  float plan_fastest(Context& ctx, const void* a, const void* b, void* out, size_t limit, int at_most);
  /// Runs the chosen plan: out = pass(a, b). plan_first or plan_fastest must have succeeded.
  void run(Context& ctx, const void* a, const void* b, void* out) const;

 private:
  struct Candidate;
  void find_candidates();
  void inspect(Candidate& c) const;
  std::unique_ptr<BackendDescriptor> build_plan(const Candidate& c, size_t limit, size_t& workspace) const;
  /// out = pass(a, b) with `plan` (whose workspace is `workspace_bytes`, from `engine`).
  void execute(Context& ctx, const BackendDescriptor& plan, size_t workspace_bytes, int64_t engine, const void* a,
               const void* b, void* out) const;

  cudnnHandle_t handle_;
  std::string what_;
  std::array<int64_t, 3> uids_;  // of the buffers a call takes, in its order
  AlgorithmSearch search_;
  std::vector<std::unique_ptr<BackendDescriptor>> tensors_;  // x, w, y
  std::unique_ptr<BackendDescriptor> conv_, op_, graph_;
  std::vector<Candidate> candidates_;
  std::unique_ptr<BackendDescriptor> plan_;
  int64_t engine_ = -1;
  size_t workspace_ = 0;
};

}  // namespace tessera::cudnn_backend
