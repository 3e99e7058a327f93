// Convolution through cuDNN on channels-last tensors: activations as Nd tensor descriptors
// with the explicit strides of NDHWC (NHWC for 2D, as 4D descriptors, so cuDNN's 2D kernels
// run), weights ODHWI as the KRSC filter layout (CUDNN_TENSOR_NHWC filter format). The
// exception is the weight gradient of a layer with few input channels, which cuDNN runs
// slowly: it may run on NCDHW copies or as Tessera's own kernel (Options::weight_gradient,
// few_channel_weight_gradient.hpp). Operands off a 16-byte boundary go through aligned copies
// (aligned_operand.hpp).
//
// API: cuDNN 9's legacy convolution calls (cudnnConvolutionForward / BackwardData /
// BackwardFilter / BackwardBias, with cudnnGet*Algorithm_v7 and cudnnFind*AlgorithmEx), which
// name exactly the three passes a ConvOp has, and beside them each pass as a graph of the graph
// API (graph_conv.hpp), which reaches engines the legacy calls do not: on an H200 the legacy
// calls ran bf16 backward-data at 0.3 TFLOP/s. A pass runs the graph where it was timed faster
// (the `benchmark` option), and for 16-bit layers untimed; fp32 layers untimed keep the legacy
// algorithm, as measured before the graph path existed (docs/gpu.md).
//
// Algorithms: chosen once per op (one geometry) for each pass, from cuDNN's heuristics when
// the op is made, or, with the `benchmark` option, by timing the candidates on the first call
// of each pass. By default only deterministic algorithms are taken (a fixed configuration
// gives the same result every run, as on the CPU), so e.g. backward-filter algorithms 0 and 3,
// which add with atomics, run only with the `deterministic` option off. Without the `tf32`
// option every pass runs FMA kernels (CUDNN_FMA_MATH).
//
// bf16 and fp16 layers: activations and their gradients in the 16-bit type, products summed in
// fp32 (a FLOAT convolution descriptor over BFLOAT16 / HALF tensors: cuDNN's "pseudo" half
// configurations), tensor-core math allowed, as PyTorch's autocast runs cuDNN. The fp32 master
// weights are rounded into a 16-bit copy at each call that reads them, the weight gradient is
// computed in the 16-bit type and widened into the fp32 gradient (what autocast's cast of the
// weight does in backward), and the bias is added and summed in fp32 by Kokkos kernels.
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "aligned_operand.hpp"
#include "context.hpp"
#include "cudnn_ops.hpp"
#include "descriptors.hpp"
#include "few_channel_weight_gradient.hpp"
#include "graph_conv.hpp"
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/backends/kokkos/channel_padding_kernels.hpp"
#include "tessera/backends/kokkos/conv_kernels.hpp"
#include "tessera/backends/kokkos/padded_channels_conv.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::cudnn_backend {
namespace {

enum PassIndex { forward_pass = 0, data_pass = 1, filter_pass = 2 };

/// The descriptors of one geometry. Each pass has its own convolution descriptor, because
/// the descriptor carries the math type of the algorithm that pass runs.
struct ConvDescs {
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv[3];
};

/// A pass's tensors in the order its cuDNN calls take them: two inputs, one output.
struct Buffers {
  const void* a;
  const void* b;
  void* out;
};

/// The algorithm one pass runs, with the math type and workspace it needs.
template <class Algo>
struct Choice {
  Algo algo{};
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t workspace = 0;
  bool timed = false;  // picked by timing: final
  float milliseconds = 0.0f;  // cuDNN's timing of it, when timed
};

// The three passes' queries under one set of names, so that choosing is written once.
struct ForwardPass {
  using Algo = cudnnConvolutionFwdAlgo_t;
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr PassIndex index = forward_pass;
  static int max_count(cudnnHandle_t h, const std::string& what) {
    int n = 0;
    check(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &n), "cudnnGetConvolutionForwardAlgorithmMaxCount", what);
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvDescs& d, int n, int* got, Perf* p, const std::string& what) {
    check(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv[index].get(), d.y.get(), n, got, p),
          "cudnnGetConvolutionForwardAlgorithm_v7", what);
  }
  static void find(cudnnHandle_t h, const ConvDescs& d, const Buffers& b, int n, int* got, Perf* p, void* ws,
                   size_t bytes, const std::string& what) {
    check(cudnnFindConvolutionForwardAlgorithmEx(h, d.x.get(), b.a, d.w.get(), b.b, d.conv[index].get(), d.y.get(),
                                                 b.out, n, got, p, ws, bytes),
          "cudnnFindConvolutionForwardAlgorithmEx", what);
  }
  static cudnnStatus_t workspace_size(cudnnHandle_t h, const ConvDescs& d, Algo a, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv[index].get(), d.y.get(), a, bytes);
  }
};

struct DataPass {
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr PassIndex index = data_pass;
  static int max_count(cudnnHandle_t h, const std::string& what) {
    int n = 0;
    check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &n), "cudnnGetConvolutionBackwardDataAlgorithmMaxCount",
          what);
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvDescs& d, int n, int* got, Perf* p, const std::string& what) {
    check(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv[index].get(), d.x.get(), n, got,
                                                      p),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7", what);
  }
  static void find(cudnnHandle_t h, const ConvDescs& d, const Buffers& b, int n, int* got, Perf* p, void* ws,
                   size_t bytes, const std::string& what) {
    check(cudnnFindConvolutionBackwardDataAlgorithmEx(h, d.w.get(), b.a, d.y.get(), b.b, d.conv[index].get(),
                                                      d.x.get(), b.out, n, got, p, ws, bytes),
          "cudnnFindConvolutionBackwardDataAlgorithmEx", what);
  }
  static cudnnStatus_t workspace_size(cudnnHandle_t h, const ConvDescs& d, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv[index].get(), d.x.get(), a,
                                                        bytes);
  }
};

struct FilterPass {
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr PassIndex index = filter_pass;
  static int max_count(cudnnHandle_t h, const std::string& what) {
    int n = 0;
    check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &n),
          "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount", what);
    return n;
  }
  static void heuristics(cudnnHandle_t h, const ConvDescs& d, int n, int* got, Perf* p, const std::string& what) {
    check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x.get(), d.y.get(), d.conv[index].get(), d.w.get(), n,
                                                        got, p),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7", what);
  }
  static void find(cudnnHandle_t h, const ConvDescs& d, const Buffers& b, int n, int* got, Perf* p, void* ws,
                   size_t bytes, const std::string& what) {
    check(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, d.x.get(), b.a, d.y.get(), b.b, d.conv[index].get(),
                                                        d.w.get(), b.out, n, got, p, ws, bytes),
          "cudnnFindConvolutionBackwardFilterAlgorithmEx", what);
  }
  static cudnnStatus_t workspace_size(cudnnHandle_t h, const ConvDescs& d, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x.get(), d.y.get(), d.conv[index].get(), d.w.get(), a,
                                                          bytes);
  }
};

/// The search the options allow for data of `type`. Tensor-core math: for fp32 data only with
/// the `tf32` option (TF32 products); for bf16 and fp16 data always, since tensor cores are why
/// a layer runs in 16 bits.
AlgorithmSearch search_of(const Options& o, ElementType type) {
  return {o.tf32 || type != ElementType::fp32, o.deterministic};
}

/// The math type queries run under: FMA only, unless tensor ops are allowed (default math lets
/// cuDNN use tensor cores: TF32 for float data, native for 16-bit data).
cudnnMathType_t query_math(bool tensor_ops) { return tensor_ops ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }

/// A result usable at all: it ran (or would run), it is deterministic, and its math is
/// allowed: never a conversion of the data to another type, and without tensor ops no
/// tensor-op math (such a result was rated for TF32).
template <class Perf>
bool usable(const Perf& r, const AlgorithmSearch& s) {
  return r.status == CUDNN_STATUS_SUCCESS && (!s.deterministic || r.determinism == CUDNN_DETERMINISTIC) &&
         r.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
         (s.tensor_ops || r.mathType == CUDNN_FMA_MATH || r.mathType == CUDNN_DEFAULT_MATH);
}

/// The workspace an algorithm may ask for: what the shared workspace already holds plus a
/// quarter of the free device memory, so that activations keep room to grow.
size_t workspace_limit(const Context& ctx) { return ctx.workspace_capacity() + Context::free_device_bytes() / 4; }

/// The first usable result, in cuDNN's order (fastest first), whose workspace fits `limit`.
/// Sets the pass's descriptor to the math of each result it tries.
template <class Pass>
bool take_first(cudnnHandle_t h, const ConvDescs& d, const std::vector<typename Pass::Perf>& results, int count,
                const AlgorithmSearch& s, size_t limit, Choice<typename Pass::Algo>& out, const std::string& what) {
  for (int i = 0; i < count; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    if (!usable(r, s)) continue;
    const cudnnMathType_t math = s.tensor_ops ? r.mathType : CUDNN_FMA_MATH;
    check(cudnnSetConvolutionMathType(d.conv[Pass::index].get(), math), "cudnnSetConvolutionMathType", what);
    size_t bytes = 0;
    if (Pass::workspace_size(h, d, r.algo, &bytes) != CUDNN_STATUS_SUCCESS || bytes > limit) continue;
    out.algo = r.algo;
    out.math = math;
    out.workspace = bytes;
    out.milliseconds = r.time;
    return true;
  }
  return false;
}

/// cuDNN's heuristic ranking of the pass's algorithms (no data needed, nothing runs).
template <class Pass>
std::vector<typename Pass::Perf> ranked(cudnnHandle_t h, const ConvDescs& d, bool tensor_ops, int& count,
                                        const std::string& what) {
  check(cudnnSetConvolutionMathType(d.conv[Pass::index].get(), query_math(tensor_ops)), "cudnnSetConvolutionMathType",
        what);
  const int n = Pass::max_count(h, what);
  std::vector<typename Pass::Perf> results(static_cast<size_t>(std::max(n, 1)));
  Pass::heuristics(h, d, n, &count, results.data(), what);
  return results;
}

template <class Pass>
bool choose_by_heuristics(Context& ctx, const ConvDescs& d, const AlgorithmSearch& s, Choice<typename Pass::Algo>& out,
                          const std::string& what) {
  int count = 0;
  const auto results = ranked<Pass>(ctx.handle(), d, s.tensor_ops, count, what);
  return take_first<Pass>(ctx.handle(), d, results, count, s, workspace_limit(ctx), out, what);
}

/// Times the pass's candidates on the call's own tensors (the output is overwritten, as the
/// call itself will) and keeps the fastest usable one; the heuristic choice stays if none is.
template <class Pass>
bool choose_by_timing(Context& ctx, const ConvDescs& d, const AlgorithmSearch& s, const Buffers& b,
                      Choice<typename Pass::Algo>& inout, const std::string& what) {
  const bool tensor_ops = s.tensor_ops;
  const cudnnHandle_t h = ctx.handle();
  const cudnnConvolutionDescriptor_t conv = d.conv[Pass::index].get();
  const size_t limit = workspace_limit(ctx);
  // Time with the largest workspace a usable candidate asks for within the limit: enough for
  // every candidate worth timing, and no more.
  int count = 0;
  const auto candidates = ranked<Pass>(h, d, tensor_ops, count, what);
  size_t largest = inout.workspace;
  for (int i = 0; i < count; ++i) {
    const auto& r = candidates[static_cast<size_t>(i)];
    if (!usable(r, s)) continue;
    check(cudnnSetConvolutionMathType(conv, tensor_ops ? r.mathType : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType",
          what);
    size_t bytes = 0;
    if (Pass::workspace_size(h, d, r.algo, &bytes) == CUDNN_STATUS_SUCCESS && bytes <= limit)
      largest = std::max(largest, bytes);
  }
  check(cudnnSetConvolutionMathType(conv, query_math(tensor_ops)), "cudnnSetConvolutionMathType", what);
  void* workspace = ctx.workspace(largest);
  std::vector<typename Pass::Perf> timed(candidates.size());
  int timed_count = 0;
  Pass::find(h, d, b, static_cast<int>(timed.size()), &timed_count, timed.data(), workspace, largest, what);
  Choice<typename Pass::Algo> fastest;
  const bool found = take_first<Pass>(h, d, timed, timed_count, s, largest, fastest, what);
  if (found) inout = fastest;
  inout.timed = true;
  check(cudnnSetConvolutionMathType(conv, inout.math), "cudnnSetConvolutionMathType", what);
  return found;
}

/// The convolution of `g` (padding, stride, dilation), accumulated in float whatever the data
/// type (for 16-bit data, cuDNN's pseudo-half configurations).
void set_convolution(const ConvDesc& conv, const ops::ConvGeometry& g, const std::string& what) {
  const int rank = g.spatial_rank;
  const std::vector<int> padding = spatial(g.padding, rank), stride = spatial(g.stride, rank),
                         dilation = spatial(g.dilation, rank);
  check(cudnnSetConvolutionNdDescriptor(conv.get(), rank, padding.data(), stride.data(), dilation.data(),
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolutionNdDescriptor", what);
}

/// The weight gradient's channels-first route (Options::WeightGradient::channels_first): its
/// descriptors, the copies it runs on, and its algorithm.
struct ChannelsFirst {
  ConvDescs d;
  TensorDesc weight_last, weight_first;  // the weight gradient as tensors, for the copy back
  Tensor x, dy, dw;
  Choice<cudnnConvolutionBwdFilterAlgo_t> choice;

  ChannelsFirst(const ops::ConvGeometry& g, const std::string& what)
      : x(g.input_shape(), g.type, "tessera::cudnn_channels_first_input"),
        dy(g.output_shape(), g.type, "tessera::cudnn_channels_first_output_gradient"),
        dw(g.weight_shape(), g.type, "tessera::cudnn_channels_first_weight_gradient") {
    const int rank = g.spatial_rank;
    const std::vector<int> kernel = spatial(g.kernel, rank);
    set_channels_first(d.x, g.batch, g.in_channels, spatial(g.in_size, rank), what, g.type);
    set_channels_first(d.y, g.batch, g.out_channels, spatial(g.out_size(), rank), what, g.type);
    set_channels_first_filter(d.w, g.out_channels, g.in_channels, kernel, what, g.type);
    set_channels_last(weight_last, g.out_channels, g.in_channels, kernel, what, g.type);
    set_channels_first(weight_first, g.out_channels, g.in_channels, kernel, what, g.type);
    set_convolution(d.conv[filter_pass], g, what);
  }
};

/// A convolution bound to one geometry: descriptors built once, one algorithm per pass.
class CudnnConvOp final : public ops::ConvOp {
 public:
  CudnnConvOp(const ops::ConvGeometry& g, const Options& options)
      : g_(g), options_(options), search_(search_of(options, g.type)) {
    const std::string w = what();
    const int rank = g.spatial_rank;
    const auto out = g.out_size();
    set_channels_last(d_.x, g.batch, g.in_channels, spatial(g.in_size, rank), w, g.type);
    set_channels_last(d_.y, g.batch, g.out_channels, spatial(out, rank), w, g.type);
    set_channels_last_filter(d_.w, g.out_channels, g.in_channels, spatial(g.kernel, rank), w, g.type);
    if (half()) {
      weight_half_ = Tensor(g.weight_shape(), g.type, "tessera::cudnn_weight_16bit");
      weight_gradient_half_ = Tensor(g.weight_shape(), g.type, "tessera::cudnn_weight_gradient_16bit");
    }
    // [1, K, 1, ...]: one value per output channel, broadcast over samples and positions.
    set_channels_last(d_.bias, 1, g.out_channels, std::vector<int>(static_cast<size_t>(rank), 1), w);
    for (const ConvDesc& conv : d_.conv) set_convolution(conv, g, w);
    // Both round the output size down; a difference would mean a descriptor is wrong.
    std::vector<int> dims(static_cast<size_t>(rank + 2));
    check(cudnnGetConvolutionNdForwardOutputDim(d_.conv[forward_pass].get(), d_.x.get(), d_.w.get(), rank + 2,
                                                dims.data()),
          "cudnnGetConvolutionNdForwardOutputDim", w);
    std::vector<int> expected{static_cast<int>(g.batch), static_cast<int>(g.out_channels)};
    for (const int e : spatial(out, rank)) expected.push_back(e);
    if (dims != expected)
      throw Error("cudnn " + w + ": cuDNN computes another output size than " + g.output_shape().str() +
                  " (internal error)");
  }

  std::string backend() const override { return "cudnn"; }

  /// Takes each pass's algorithm from cuDNN's heuristics; false when a pass has no usable
  /// (deterministic unless allowed otherwise, allowed math, workspace within bounds) algorithm.
  bool choose_algorithms() {
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    const std::string w = what();
    legacy_[forward_pass] = choose_by_heuristics<ForwardPass>(ctx, d_, search_, forward_, w);
    legacy_[data_pass] = choose_by_heuristics<DataPass>(ctx, d_, search_, data_, w);
    legacy_[filter_pass] = choose_by_heuristics<FilterPass>(ctx, d_, search_, filter_, w);
    for (const PassIndex pass : {forward_pass, data_pass, filter_pass}) {
      // 16-bit layers take the graph API's first engine; so does a pass with no legacy algorithm.
      if (half() || !legacy_[pass]) {
        GraphConv* graph = graph_for(ctx, pass);
        use_graph_[pass] = graph && graph->plan_first(workspace_limit(ctx));
      }
      if (!legacy_[pass] && !use_graph_[pass]) return false;
    }
    using WeightGradient = Options::WeightGradient;
    const WeightGradient how = options_.weight_gradient;
    if (how == WeightGradient::channels_first) {
      channels_first_ = std::make_unique<ChannelsFirst>(g_, w);
      route_ = Route::channels_first;
      return choose_by_heuristics<FilterPass>(ctx, channels_first_->d, search_, channels_first_->choice, w);
    }
    // Untimed, the kernel serves few-channel layers in FP32, where it measured 5x cuDNN's rate
    // (1.19 against 0.23 TFLOP/s); with TF32 cuDNN's 1.6 TFLOP/s stays (H200, docs/gpu.md).
    const bool kernel = how == WeightGradient::few_channel_kernel ||
                        (how == WeightGradient::chosen && few_channels() && !search_.tensor_ops);
    if (kernel && FewChannelWeightGradient::serves(g_)) {
      kernel_ = std::make_unique<FewChannelWeightGradient>(g_);
      route_ = Route::kernel;
    }
    return true;
  }

  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y) override {
    require_elements(x, g_.input_shape(), what(), "input");
    require_elements(w, g_.weight_shape(), what(), "weight");
    if (!bias.empty()) require_elements(bias, Shape{g_.out_channels}, what(), "bias");
    require_elements(y, g_.output_shape(), what(), "output");
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    const Tensor& xa = input_.read(x);
    const Tensor& wa = read_weights(w);
    const Tensor& ya = output_.write(y);
    const Buffers b{xa.raw_data(), wa.raw_data(), ya.raw_data()};
    if (options_.benchmark && !forward_.timed) {
      if (legacy_[forward_pass]) choose_by_timing<ForwardPass>(ctx, d_, search_, b, forward_, what());
      forward_.timed = true;
      choose_api_by_timing(ctx, forward_pass, b, [&] { legacy_forward(ctx, b); });
    }
    if (use_graph_[forward_pass])
      graph_[forward_pass]->run(ctx, b.a, b.b, b.out);
    else
      legacy_forward(ctx, b);
    if (!bias.empty()) {
      if (half())  // fp32 bias added to the fp32 value of each output, the sum rounded once
        kokkos_backend::add_channel_bias(bias, ya);
      else
        check(cudnnAddTensor(ctx.handle(), &one, d_.bias.get(), bias_.read(bias).data(), &one, d_.y.get(), ya.data()),
              "cudnnAddTensor (bias)", what());
    }
    output_.written(y);
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    require_elements(dy, g_.output_shape(), what(), "output gradient");
    require_elements(w, g_.weight_shape(), what(), "weight");
    require_elements(dx, g_.input_shape(), what(), "input gradient");
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    const Tensor& dya = output_.read(dy);
    const Tensor& wa = read_weights(w);
    const Tensor& dxa = input_.write(dx);
    const Buffers legacy{wa.raw_data(), dya.raw_data(), dxa.raw_data()};  // the legacy call's order
    if (options_.benchmark && !data_.timed) {
      if (legacy_[data_pass]) choose_by_timing<DataPass>(ctx, d_, search_, legacy, data_, what());
      data_.timed = true;
      choose_api_by_timing(ctx, data_pass, Buffers{dya.raw_data(), wa.raw_data(), dxa.raw_data()},
                           [&] { legacy_backward_data(ctx, legacy); });
    }
    if (use_graph_[data_pass])
      graph_[data_pass]->run(ctx, dya.raw_data(), wa.raw_data(), dxa.raw_data());
    else
      legacy_backward_data(ctx, legacy);
    input_.written(dx);
  }

  void backward_weights(const Tensor& x, const Tensor& dy, const Tensor& dw, const Tensor& dbias) override {
    require_elements(x, g_.input_shape(), what(), "input");
    require_elements(dy, g_.output_shape(), what(), "output gradient");
    require_elements(dw, g_.weight_shape(), what(), "weight gradient");
    if (!dbias.empty()) require_elements(dbias, Shape{g_.out_channels}, what(), "bias gradient");
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    const Tensor& xa = input_.read(x);
    const Tensor& dya = output_.read(dy);
    // 16-bit layers: cuDNN writes the gradient in the data's type, widened into dw below;
    // Tessera's kernel sums in fp32 and writes dw itself (it takes any alignment).
    const Tensor& dwa = half() ? weight_gradient_half_ : weight_.write(dw);
    const Tensor& dw_kernel = half() ? dw : dwa;
    if (options_.benchmark && !filter_.timed) choose_weight_gradient(ctx, xa, dya, dwa, dw_kernel);
    if (route_ == Route::channels_first) {
      weight_gradient_channels_first(ctx, xa, dya, dwa);
    } else if (route_ == Route::kernel) {
      kernel_->run(xa, dya, dw_kernel);
    } else if (use_graph_[filter_pass]) {
      graph_[filter_pass]->run(ctx, xa.raw_data(), dya.raw_data(), dwa.raw_data());
    } else {
      legacy_backward_filter(ctx, Buffers{xa.raw_data(), dya.raw_data(), dwa.raw_data()});
    }
    if (half()) {
      if (route_ != Route::kernel) deep_copy(dw, dwa);  // exact: every 16-bit value is a float
      if (!dbias.empty()) kokkos_backend::sum_channels(dya, dbias, bias_sums_);
      return;
    }
    weight_.written(dw);
    if (!dbias.empty()) {
      check(cudnnConvolutionBackwardBias(ctx.handle(), &one, d_.y.get(), dya.data(), &zero, d_.bias.get(),
                                         bias_.write(dbias).data()),
            "cudnnConvolutionBackwardBias", what());
      bias_.written(dbias);
    }
  }

 private:
  std::string what() const { return "convolution " + g_.str(); }
  bool half() const { return g_.type != ElementType::fp32; }

  void legacy_forward(Context& ctx, const Buffers& b) {
    void* workspace = ctx.workspace(forward_.workspace);
    check(cudnnConvolutionForward(ctx.handle(), &one, d_.x.get(), b.a, d_.w.get(), b.b, d_.conv[forward_pass].get(),
                                  forward_.algo, workspace, forward_.workspace, &zero, d_.y.get(), b.out),
          "cudnnConvolutionForward", running(static_cast<int>(forward_.algo), forward_.workspace));
  }
  /// b: w, dy -> dx.
  void legacy_backward_data(Context& ctx, const Buffers& b) {
    void* workspace = ctx.workspace(data_.workspace);
    check(cudnnConvolutionBackwardData(ctx.handle(), &one, d_.w.get(), b.a, d_.y.get(), b.b,
                                       d_.conv[data_pass].get(), data_.algo, workspace, data_.workspace, &zero,
                                       d_.x.get(), b.out),
          "cudnnConvolutionBackwardData", running(static_cast<int>(data_.algo), data_.workspace));
  }
  /// b: x, dy -> dw.
  void legacy_backward_filter(Context& ctx, const Buffers& b) {
    void* workspace = ctx.workspace(filter_.workspace);
    check(cudnnConvolutionBackwardFilter(ctx.handle(), &one, d_.x.get(), b.a, d_.y.get(), b.b,
                                         d_.conv[filter_pass].get(), filter_.algo, workspace, filter_.workspace,
                                         &zero, d_.w.get(), b.out),
          "cudnnConvolutionBackwardFilter", running(static_cast<int>(filter_.algo), filter_.workspace));
  }

  /// The pass's graph (graph_conv.hpp), made at the first call; nullptr when cuDNN refuses
  /// the graph (the legacy calls then serve the pass).
  GraphConv* graph_for(Context& ctx, PassIndex pass) {
    if (!graph_[pass] && !graph_refused_[pass]) {
      static constexpr GraphPass passes[] = {GraphPass::forward, GraphPass::data, GraphPass::filter};
      try {
        graph_[pass] = std::make_unique<GraphConv>(ctx.handle(), g_, passes[pass], search_);
      } catch (const Error&) {
        graph_refused_[pass] = true;
      }
    }
    return graph_[pass].get();
  }

  /// Times the pass's legacy algorithm (`legacy`, when it has one) and the graph's engines on
  /// the call's buffers (b in the graph's order) and runs the pass with the faster from now on;
  /// returns the time of the one kept, in milliseconds.
  float choose_api_by_timing(Context& ctx, PassIndex pass, const Buffers& b, const std::function<void()>& legacy) {
    float legacy_ms = -1.0f;
    if (legacy_[pass]) {
      legacy();  // once untimed: the first call of an algorithm may load its kernels
      legacy_ms = milliseconds_of(legacy);
    }
    GraphConv* graph = graph_for(ctx, pass);
    const float graph_ms =
        graph ? graph->plan_fastest(ctx, b.a, b.b, b.out, workspace_limit(ctx), graph_candidates) : -1.0f;
    if (graph_ms >= 0.0f && (legacy_ms < 0.0f || graph_ms < legacy_ms))
      use_graph_[pass] = true;
    else if (legacy_ms >= 0.0f)
      use_graph_[pass] = false;
    // else neither ran under timing: the heuristic choice stays.
    const float kept = use_graph_[pass] ? graph_ms : legacy_ms;
    return kept >= 0.0f ? kept : std::numeric_limits<float>::max();
  }

  /// What cuDNN reads for the weights: for a 16-bit layer the fp32 master weights rounded into
  /// the layer's type (at every call: they change between steps), else `w` or its aligned copy.
  const Tensor& read_weights(const Tensor& w) {
    if (!half()) return weight_.read(w);
    deep_copy(weight_half_, w);
    return weight_half_;
  }

  void to_channels_first(cudnnHandle_t h, const Tensor& x, const Tensor& dy) const {
    const ChannelsFirst& cf = *channels_first_;
    check(cudnnTransformTensor(h, &one, d_.x.get(), x.raw_data(), &zero, cf.d.x.get(), cf.x.raw_data()),
          "cudnnTransformTensor (input to channels-first)", what());
    check(cudnnTransformTensor(h, &one, d_.y.get(), dy.raw_data(), &zero, cf.d.y.get(), cf.dy.raw_data()),
          "cudnnTransformTensor (output gradient to channels-first)", what());
  }

  void weight_gradient_to_channels_last(cudnnHandle_t h, const Tensor& dw) const {
    const ChannelsFirst& cf = *channels_first_;
    check(cudnnTransformTensor(h, &one, cf.weight_first.get(), cf.dw.raw_data(), &zero, cf.weight_last.get(),
                               dw.raw_data()),
          "cudnnTransformTensor (weight gradient to channels-last)", what());
  }

  void weight_gradient_channels_first(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dw) const {
    const ChannelsFirst& cf = *channels_first_;
    to_channels_first(ctx.handle(), x, dy);
    void* workspace = ctx.workspace(cf.choice.workspace);
    check(cudnnConvolutionBackwardFilter(ctx.handle(), &one, cf.d.x.get(), cf.x.raw_data(), cf.d.y.get(),
                                         cf.dy.raw_data(), cf.d.conv[filter_pass].get(), cf.choice.algo, workspace,
                                         cf.choice.workspace, &zero, cf.d.w.get(), cf.dw.raw_data()),
          "cudnnConvolutionBackwardFilter (channels-first)",
          running(static_cast<int>(cf.choice.algo), cf.choice.workspace));
    weight_gradient_to_channels_last(ctx.handle(), dw);
  }

  /// A layer whose input channels are not a multiple of 8, which cuDNN's kernels vectorise by.
  bool few_channels() const { return g_.in_channels % 8 != 0; }

  /// Times the weight gradient: cuDNN's algorithms on the call's tensors, and, for a layer of
  /// few input channels (or as the options force), on channels-first copies (their time
  /// included) and Tessera's own kernel; keeps the fastest.
  /// `dw` is what cuDNN writes, `dw_kernel` what the kernel writes (fp32).
  void choose_weight_gradient(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dw,
                              const Tensor& dw_kernel) {
    using WeightGradient = Options::WeightGradient;
    const WeightGradient how = options_.weight_gradient;
    const Buffers b{x.raw_data(), dy.raw_data(), dw.raw_data()};
    if (legacy_[filter_pass]) choose_by_timing<FilterPass>(ctx, d_, search_, b, filter_, what());
    filter_.timed = true;
    float best = choose_api_by_timing(ctx, filter_pass, b, [&] { legacy_backward_filter(ctx, b); });
    route_ = Route::channels_last;
    if (how == WeightGradient::channels_last || (how == WeightGradient::chosen && !few_channels())) return;
    if (how != WeightGradient::few_channel_kernel) {
      const float ms = time_channels_first(ctx, x, dy, dw);
      if (ms >= 0.0f && (how == WeightGradient::channels_first || ms < best)) {
        best = ms;
        route_ = Route::channels_first;
      }
    }
    if (how != WeightGradient::channels_first && FewChannelWeightGradient::serves(g_)) {
      const float ms = time_kernel(x, dy, dw_kernel);
      if (how == WeightGradient::few_channel_kernel || ms < best) route_ = Route::kernel;
    }
  }

  /// The channels-first route's time (its fastest algorithm plus the copies), or -1 when
  /// cuDNN has no usable algorithm for it.
  float time_channels_first(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dw) {
    const std::string w = what();
    if (!channels_first_) channels_first_ = std::make_unique<ChannelsFirst>(g_, w);
    ChannelsFirst& cf = *channels_first_;
    const float copies_ms = milliseconds_of([&] {
      to_channels_first(ctx.handle(), x, dy);
      weight_gradient_to_channels_last(ctx.handle(), dw);
    });
    const bool found =
        choose_by_timing<FilterPass>(ctx, cf.d, search_, Buffers{cf.x.raw_data(), cf.dy.raw_data(), cf.dw.raw_data()},
                                     cf.choice, w);
    return found ? cf.choice.milliseconds + copies_ms : -1.0f;
  }

  /// Tessera's kernel's time, after one untimed run.
  float time_kernel(const Tensor& x, const Tensor& dy, const Tensor& dw) {
    if (!kernel_) kernel_ = std::make_unique<FewChannelWeightGradient>(g_);
    kernel_->run(x, dy, dw);
    return milliseconds_of([&] { kernel_->run(x, dy, dw); });
  }

  /// Wall time of the device work `f` queues, in milliseconds (cuDNN's timings' unit).
  static float milliseconds_of(const std::function<void()>& f) { return static_cast<float>(1e3 * fenced_seconds(f)); }
  std::string running(int algo, size_t workspace) const {
    return what() + " (algorithm " + std::to_string(algo) + ", workspace " + std::to_string(workspace) + " bytes)";
  }

  ops::ConvGeometry g_;
  Options options_;
  AlgorithmSearch search_;
  ConvDescs d_;
  // Aligned copies of misaligned operands, by position: input and input gradient, output
  // and output gradient, weight and weight gradient, bias and bias gradient (aligned_operand.hpp).
  // Parameters are slices of the model's one parameter buffer, at any offset.
  AlignedOperand input_{g_.input_shape(), "tessera::cudnn_aligned_input", g_.type};
  AlignedOperand output_{g_.output_shape(), "tessera::cudnn_aligned_output", g_.type};
  AlignedOperand weight_{g_.weight_shape(), "tessera::cudnn_aligned_weight"};
  AlignedOperand bias_{Shape{g_.out_channels}, "tessera::cudnn_aligned_bias"};
  // 16-bit layers: the weights as cuDNN reads them and the gradient it writes (in the layer's
  // type), and the bias gradient's partial sums.
  Tensor weight_half_, weight_gradient_half_;
  kokkos_backend::ConvWorkspace<float> bias_sums_;
  // Per pass: whether the legacy calls have an algorithm for it, whether it runs as a graph,
  // its graph, and whether cuDNN refused the graph.
  bool legacy_[3] = {false, false, false};
  bool use_graph_[3] = {false, false, false};
  std::unique_ptr<GraphConv> graph_[3];
  bool graph_refused_[3] = {false, false, false};
  // How many of a graph's engines timing tries (cuDNN's heuristics rank them: the fastest is
  // nearly always among the first).
  static constexpr int graph_candidates = 8;
  Choice<cudnnConvolutionFwdAlgo_t> forward_;
  Choice<cudnnConvolutionBwdDataAlgo_t> data_;
  Choice<cudnnConvolutionBwdFilterAlgo_t> filter_;
  // How the weight gradient runs (Options::WeightGradient), and what its routes need.
  enum class Route { channels_last, channels_first, kernel };
  Route route_ = Route::channels_last;
  std::unique_ptr<ChannelsFirst> channels_first_;
  std::unique_ptr<FewChannelWeightGradient> kernel_;
};

/// A 16-bit geometry whose input channels are not a multiple of 8 as the convolution over its
/// input padded with zero channels to the next multiple (kokkos_backend::PaddedChannelsConv):
/// cuDNN's tensor-core kernels take 16-bit tensors of such channel counts only (on an H200,
/// cosmoflow-small's first layer, 4 channels, ran its bf16 forward at 7.9 TFLOP/s unpadded).
/// nullptr where cuDNN has no algorithm for the padded geometry.
std::unique_ptr<ops::ConvOp> make_padded_channels(const ops::ConvGeometry& g, const Options& o) {
  if (g.type == ElementType::fp32 || g.in_channels % 8 == 0) return nullptr;
  ops::ConvGeometry padded = g;
  padded.in_channels = kokkos_backend::padded_channels(g.in_channels);
  if (!fits_in_int(padded.input_shape().numel()) || !fits_in_int(padded.weight_shape().numel())) return nullptr;
  auto inner = std::make_unique<CudnnConvOp>(padded, o);
  if (!inner->choose_algorithms()) return nullptr;
  return std::make_unique<kokkos_backend::PaddedChannelsConv>(g, padded, std::move(inner));
}

}  // namespace

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g, std::string& why) {
  g.validate("cudnn backend");
  if (!fits_in_int(g.input_shape().numel()) || !fits_in_int(g.output_shape().numel()) ||
      !fits_in_int(g.weight_shape().numel())) {
    why = "a tensor of " + g.str() + " has more elements than cuDNN's 32-bit sizes hold";
    return nullptr;
  }
  const Options o = options();
  if (auto padded = make_padded_channels(g, o)) return padded;
  auto op = std::make_unique<CudnnConvOp>(g, o);
  if (!op->choose_algorithms()) {
    why = std::string("cuDNN has no ") + (o.deterministic ? "deterministic " : "") + "algorithm for every pass of " +
          g.str();
    return nullptr;
  }
  return op;
}

}  // namespace tessera::cudnn_backend
