// Convolution through cuDNN on channels-last tensors: activations as Nd tensor descriptors
// with the explicit strides of NDHWC (NHWC for 2D, as 4D descriptors, so cuDNN's 2D kernels
// run), weights ODHWI as the KRSC filter layout (CUDNN_TENSOR_NHWC filter format). The
// exception is the weight gradient of a layer with few input channels, which cuDNN runs
// slowly: it may run on NCDHW copies or as Tessera's own kernel (Options::weight_gradient,
// few_channel_weight_gradient.hpp). Operands off a 16-byte boundary go through aligned copies
// (aligned_operand.hpp).
//
// API: cuDNN 9's legacy convolution calls (cudnnConvolutionForward / BackwardData /
// BackwardFilter / BackwardBias, with cudnnGet*Algorithm_v7 and cudnnFind*AlgorithmEx). They
// are deprecated in cuDNN 9 but present, and they name exactly the three passes a ConvOp
// has, with algorithm queries and workspace sizes built in. Measured on an H200 (docs/gpu.md),
// their weight gradient for 4 input channels is slow in either layout; whether the graph
// API's engines do it faster is not yet measured.
//
// Algorithms: chosen once per op (one geometry) for each pass, from cuDNN's heuristics when
// the op is made, or, with the `benchmark` option, by timing the candidates on the first call
// of each pass. By default only deterministic algorithms are taken (a fixed configuration
// gives the same result every run, as on the CPU), so e.g. backward-filter algorithms 0 and 3,
// which add with atomics, run only with the `deterministic` option off. Without the `tf32`
// option every pass runs FMA kernels (CUDNN_FMA_MATH).
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aligned_operand.hpp"
#include "context.hpp"
#include "cudnn_ops.hpp"
#include "descriptors.hpp"
#include "few_channel_weight_gradient.hpp"
#include "tessera/backends/cudnn/cudnn_backend.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::cudnn_backend {
namespace {

constexpr float one = 1.0f;
constexpr float zero = 0.0f;

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

/// The math type queries run under: FMA only, unless TF32 is allowed (default math lets cuDNN
/// use TF32 tensor cores for float data).
cudnnMathType_t query_math(bool tf32) { return tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }

/// A result usable at all: it ran (or would run), it is deterministic, and its math is
/// allowed: never a conversion of the float data to half, and without TF32 no tensor-op math
/// (such a result was rated for TF32).
template <class Perf>
bool usable(const Perf& r, const Options& o) {
  const bool tf32 = o.tf32;
  return r.status == CUDNN_STATUS_SUCCESS && (!o.deterministic || r.determinism == CUDNN_DETERMINISTIC) &&
         r.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
         (tf32 || r.mathType == CUDNN_FMA_MATH || r.mathType == CUDNN_DEFAULT_MATH);
}

/// The workspace an algorithm may ask for: what the shared workspace already holds plus a
/// quarter of the free device memory, so that activations keep room to grow.
size_t workspace_limit(const Context& ctx) { return ctx.workspace_capacity() + Context::free_device_bytes() / 4; }

/// The first usable result, in cuDNN's order (fastest first), whose workspace fits `limit`.
/// Sets the pass's descriptor to the math of each result it tries.
template <class Pass>
bool take_first(cudnnHandle_t h, const ConvDescs& d, const std::vector<typename Pass::Perf>& results, int count,
                const Options& o, size_t limit, Choice<typename Pass::Algo>& out, const std::string& what) {
  for (int i = 0; i < count; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    if (!usable(r, o)) continue;
    const cudnnMathType_t math = o.tf32 ? r.mathType : CUDNN_FMA_MATH;
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
std::vector<typename Pass::Perf> ranked(cudnnHandle_t h, const ConvDescs& d, bool tf32, int& count,
                                        const std::string& what) {
  check(cudnnSetConvolutionMathType(d.conv[Pass::index].get(), query_math(tf32)), "cudnnSetConvolutionMathType",
        what);
  const int n = Pass::max_count(h, what);
  std::vector<typename Pass::Perf> results(static_cast<size_t>(std::max(n, 1)));
  Pass::heuristics(h, d, n, &count, results.data(), what);
  return results;
}

template <class Pass>
bool choose_by_heuristics(Context& ctx, const ConvDescs& d, const Options& o, Choice<typename Pass::Algo>& out,
                          const std::string& what) {
  int count = 0;
  const auto results = ranked<Pass>(ctx.handle(), d, o.tf32, count, what);
  return take_first<Pass>(ctx.handle(), d, results, count, o, workspace_limit(ctx), out, what);
}

/// Times the pass's candidates on the call's own tensors (the output is overwritten, as the
/// call itself will) and keeps the fastest usable one; the heuristic choice stays if none is.
template <class Pass>
bool choose_by_timing(Context& ctx, const ConvDescs& d, const Options& o, const Buffers& b,
                      Choice<typename Pass::Algo>& inout, const std::string& what) {
  const bool tf32 = o.tf32;
  const cudnnHandle_t h = ctx.handle();
  const cudnnConvolutionDescriptor_t conv = d.conv[Pass::index].get();
  const size_t limit = workspace_limit(ctx);
  // Time with the largest workspace a usable candidate asks for within the limit: enough for
  // every candidate worth timing, and no more.
  int count = 0;
  const auto candidates = ranked<Pass>(h, d, tf32, count, what);
  size_t largest = inout.workspace;
  for (int i = 0; i < count; ++i) {
    const auto& r = candidates[static_cast<size_t>(i)];
    if (!usable(r, o)) continue;
    check(cudnnSetConvolutionMathType(conv, tf32 ? r.mathType : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType", what);
    size_t bytes = 0;
    if (Pass::workspace_size(h, d, r.algo, &bytes) == CUDNN_STATUS_SUCCESS && bytes <= limit)
      largest = std::max(largest, bytes);
  }
  check(cudnnSetConvolutionMathType(conv, query_math(tf32)), "cudnnSetConvolutionMathType", what);
  void* workspace = ctx.workspace(largest);
  std::vector<typename Pass::Perf> timed(candidates.size());
  int timed_count = 0;
  Pass::find(h, d, b, static_cast<int>(timed.size()), &timed_count, timed.data(), workspace, largest, what);
  Choice<typename Pass::Algo> fastest;
  const bool found = take_first<Pass>(h, d, timed, timed_count, o, largest, fastest, what);
  if (found) inout = fastest;
  inout.timed = true;
  check(cudnnSetConvolutionMathType(conv, inout.math), "cudnnSetConvolutionMathType", what);
  return found;
}

/// The convolution of `g` (padding, stride, dilation), float data and accumulation.
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
      : x(g.input_shape(), "tessera::cudnn_channels_first_input"),
        dy(g.output_shape(), "tessera::cudnn_channels_first_output_gradient"),
        dw(g.weight_shape(), "tessera::cudnn_channels_first_weight_gradient") {
    const int rank = g.spatial_rank;
    const std::vector<int> kernel = spatial(g.kernel, rank);
    set_channels_first(d.x, g.batch, g.in_channels, spatial(g.in_size, rank), what);
    set_channels_first(d.y, g.batch, g.out_channels, spatial(g.out_size(), rank), what);
    set_channels_first_filter(d.w, g.out_channels, g.in_channels, kernel, what);
    set_channels_last(weight_last, g.out_channels, g.in_channels, kernel, what);
    set_channels_first(weight_first, g.out_channels, g.in_channels, kernel, what);
    set_convolution(d.conv[filter_pass], g, what);
  }
};

/// A convolution bound to one geometry: descriptors built once, one algorithm per pass.
class CudnnConvOp final : public ops::ConvOp {
 public:
  CudnnConvOp(const ops::ConvGeometry& g, const Options& options) : g_(g), options_(options) {
    const std::string w = what();
    const int rank = g.spatial_rank;
    const auto out = g.out_size();
    set_channels_last(d_.x, g.batch, g.in_channels, spatial(g.in_size, rank), w);
    set_channels_last(d_.y, g.batch, g.out_channels, spatial(out, rank), w);
    set_channels_last_filter(d_.w, g.out_channels, g.in_channels, spatial(g.kernel, rank), w);
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
    if (!choose_by_heuristics<ForwardPass>(ctx, d_, options_, forward_, w) ||
        !choose_by_heuristics<DataPass>(ctx, d_, options_, data_, w) ||
        !choose_by_heuristics<FilterPass>(ctx, d_, options_, filter_, w))
      return false;
    using WeightGradient = Options::WeightGradient;
    const WeightGradient how = options_.weight_gradient;
    if (how == WeightGradient::channels_first) {
      channels_first_ = std::make_unique<ChannelsFirst>(g_, w);
      route_ = Route::channels_first;
      return choose_by_heuristics<FilterPass>(ctx, channels_first_->d, options_, channels_first_->choice, w);
    }
    // Untimed, the kernel serves few-channel layers in FP32, where it measured 5x cuDNN's rate
    // (1.19 against 0.23 TFLOP/s); with TF32 cuDNN's 1.6 TFLOP/s stays (H200, docs/gpu.md).
    const bool kernel = how == WeightGradient::few_channel_kernel ||
                        (how == WeightGradient::chosen && few_channels() && !options_.tf32);
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
    const Tensor& wa = weight_.read(w);
    const Tensor& ya = output_.write(y);
    if (options_.benchmark && !forward_.timed)
      choose_by_timing<ForwardPass>(ctx, d_, options_, Buffers{xa.data(), wa.data(), ya.data()}, forward_, what());
    void* workspace = ctx.workspace(forward_.workspace);
    check(cudnnConvolutionForward(ctx.handle(), &one, d_.x.get(), xa.data(), d_.w.get(), wa.data(),
                                  d_.conv[forward_pass].get(), forward_.algo, workspace, forward_.workspace, &zero,
                                  d_.y.get(), ya.data()),
          "cudnnConvolutionForward", running(static_cast<int>(forward_.algo), forward_.workspace));
    if (!bias.empty())
      check(cudnnAddTensor(ctx.handle(), &one, d_.bias.get(), bias_.read(bias).data(), &one, d_.y.get(), ya.data()),
            "cudnnAddTensor (bias)", what());
    output_.written(y);
  }

  void backward_data(const Tensor& dy, const Tensor& w, const Tensor& dx) override {
    require_elements(dy, g_.output_shape(), what(), "output gradient");
    require_elements(w, g_.weight_shape(), what(), "weight");
    require_elements(dx, g_.input_shape(), what(), "input gradient");
    Context& ctx = Context::get();
    const auto lock = ctx.lock();
    const Tensor& dya = output_.read(dy);
    const Tensor& wa = weight_.read(w);
    const Tensor& dxa = input_.write(dx);
    if (options_.benchmark && !data_.timed)
      choose_by_timing<DataPass>(ctx, d_, options_, Buffers{wa.data(), dya.data(), dxa.data()}, data_, what());
    void* workspace = ctx.workspace(data_.workspace);
    check(cudnnConvolutionBackwardData(ctx.handle(), &one, d_.w.get(), wa.data(), d_.y.get(), dya.data(),
                                       d_.conv[data_pass].get(), data_.algo, workspace, data_.workspace, &zero,
                                       d_.x.get(), dxa.data()),
          "cudnnConvolutionBackwardData", running(static_cast<int>(data_.algo), data_.workspace));
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
    const Tensor& dwa = weight_.write(dw);
    if (options_.benchmark && !filter_.timed) choose_weight_gradient(ctx, xa, dya, dwa);
    if (route_ == Route::channels_first) {
      weight_gradient_channels_first(ctx, xa, dya, dwa);
    } else if (route_ == Route::kernel) {
      kernel_->run(xa, dya, dwa);
    } else {
      void* workspace = ctx.workspace(filter_.workspace);
      check(cudnnConvolutionBackwardFilter(ctx.handle(), &one, d_.x.get(), xa.data(), d_.y.get(), dya.data(),
                                           d_.conv[filter_pass].get(), filter_.algo, workspace, filter_.workspace,
                                           &zero, d_.w.get(), dwa.data()),
            "cudnnConvolutionBackwardFilter", running(static_cast<int>(filter_.algo), filter_.workspace));
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

  void to_channels_first(cudnnHandle_t h, const Tensor& x, const Tensor& dy) const {
    const ChannelsFirst& cf = *channels_first_;
    check(cudnnTransformTensor(h, &one, d_.x.get(), x.data(), &zero, cf.d.x.get(), cf.x.data()),
          "cudnnTransformTensor (input to channels-first)", what());
    check(cudnnTransformTensor(h, &one, d_.y.get(), dy.data(), &zero, cf.d.y.get(), cf.dy.data()),
          "cudnnTransformTensor (output gradient to channels-first)", what());
  }

  void weight_gradient_to_channels_last(cudnnHandle_t h, const Tensor& dw) const {
    const ChannelsFirst& cf = *channels_first_;
    check(cudnnTransformTensor(h, &one, cf.weight_first.get(), cf.dw.data(), &zero, cf.weight_last.get(), dw.data()),
          "cudnnTransformTensor (weight gradient to channels-last)", what());
  }

  void weight_gradient_channels_first(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dw) const {
    const ChannelsFirst& cf = *channels_first_;
    to_channels_first(ctx.handle(), x, dy);
    void* workspace = ctx.workspace(cf.choice.workspace);
    check(cudnnConvolutionBackwardFilter(ctx.handle(), &one, cf.d.x.get(), cf.x.data(), cf.d.y.get(), cf.dy.data(),
                                         cf.d.conv[filter_pass].get(), cf.choice.algo, workspace, cf.choice.workspace,
                                         &zero, cf.d.w.get(), cf.dw.data()),
          "cudnnConvolutionBackwardFilter (channels-first)",
          running(static_cast<int>(cf.choice.algo), cf.choice.workspace));
    weight_gradient_to_channels_last(ctx.handle(), dw);
  }

  /// A layer whose input channels are not a multiple of 8, which cuDNN's kernels vectorise by.
  bool few_channels() const { return g_.in_channels % 8 != 0; }

  /// Times the weight gradient: cuDNN's algorithms on the call's tensors, and, for a layer of
  /// few input channels (or as the options force), on channels-first copies (their time
  /// included) and Tessera's own kernel; keeps the fastest.
  void choose_weight_gradient(Context& ctx, const Tensor& x, const Tensor& dy, const Tensor& dw) {
    using WeightGradient = Options::WeightGradient;
    const WeightGradient how = options_.weight_gradient;
    choose_by_timing<FilterPass>(ctx, d_, options_, Buffers{x.data(), dy.data(), dw.data()}, filter_, what());
    route_ = Route::channels_last;
    if (how == WeightGradient::channels_last || (how == WeightGradient::chosen && !few_channels())) return;
    float best = filter_.milliseconds;
    if (how != WeightGradient::few_channel_kernel) {
      const float ms = time_channels_first(ctx, x, dy, dw);
      if (ms >= 0.0f && (how == WeightGradient::channels_first || ms < best)) {
        best = ms;
        route_ = Route::channels_first;
      }
    }
    if (how != WeightGradient::channels_first && FewChannelWeightGradient::serves(g_)) {
      const float ms = time_kernel(x, dy, dw);
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
        choose_by_timing<FilterPass>(ctx, cf.d, options_, Buffers{cf.x.data(), cf.dy.data(), cf.dw.data()}, cf.choice, w);
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
  ConvDescs d_;
  // Aligned copies of misaligned operands, by position: input and input gradient, output
  // and output gradient, weight and weight gradient, bias and bias gradient (aligned_operand.hpp).
  // Parameters are slices of the model's one parameter buffer, at any offset.
  AlignedOperand input_{g_.input_shape(), "tessera::cudnn_aligned_input"};
  AlignedOperand output_{g_.output_shape(), "tessera::cudnn_aligned_output"};
  AlignedOperand weight_{g_.weight_shape(), "tessera::cudnn_aligned_weight"};
  AlignedOperand bias_{Shape{g_.out_channels}, "tessera::cudnn_aligned_bias"};
  Choice<cudnnConvolutionFwdAlgo_t> forward_;
  Choice<cudnnConvolutionBwdDataAlgo_t> data_;
  Choice<cudnnConvolutionBwdFilterAlgo_t> filter_;
  // How the weight gradient runs (Options::WeightGradient), and what its routes need.
  enum class Route { channels_last, channels_first, kernel };
  Route route_ = Route::channels_last;
  std::unique_ptr<ChannelsFirst> channels_first_;
  std::unique_ptr<FewChannelWeightGradient> kernel_;
};

}  // namespace

std::unique_ptr<ops::ConvOp> make_conv(const ops::ConvGeometry& g, std::string& why) {
  g.validate("cudnn backend");
  if (!fits_in_int(g.input_shape().numel()) || !fits_in_int(g.output_shape().numel()) ||
      !fits_in_int(g.weight_shape().numel())) {
    why = "a tensor of " + g.str() + " has more elements than cuDNN's 32-bit sizes hold";
    return nullptr;
  }
  const Options o = options();
  auto op = std::make_unique<CudnnConvOp>(g, o);
  if (!op->choose_algorithms()) {
    why = std::string("cuDNN has no ") + (o.deterministic ? "deterministic " : "") + "algorithm for every pass of " +
          g.str();
    return nullptr;
  }
  return op;
}

}  // namespace tessera::cudnn_backend
