#pragma once
// Runs one layer outside a model (Kokkos backend unless told, TestParameters) and checks its input and
// parameter gradients against central finite differences of L = Σ y·r in double, r fixed.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/gradient_check.hpp"
#include "support/test_parameters.hpp"
#include "tessera/layers/layer.hpp"
#include "tessera/registry/op_factory.hpp"

namespace tessera::testing {

class LayerHarness {
 public:
  /// `backend`: the op factory's preference ("kokkos", "auto", ...).
  LayerHarness(std::unique_ptr<layers::Layer> layer, const std::vector<Shape>& input_shapes, uint64_t seed = 1234,
               const std::string& backend = "kokkos")
      : layer_(std::move(layer)), factory_(backend) {
    const Shape out = layer_->output_shape(input_shapes);
    layers::LayerContext ctx;
    ctx.ops = &factory_;
    ctx.seed = seed;
    layer_->setup(input_shapes, ctx, params_);
    params_.fill_custom();
    for (size_t i = 0; i < input_shapes.size(); ++i) {
      inputs_.emplace_back(input_shapes[i], "test_input");
      inputs_.back().copy_from_host(
          random_vector<float>(static_cast<size_t>(input_shapes[i].numel()), 101u + static_cast<unsigned>(i)));
    }
    output_ = Tensor(out, "test_output");
  }

  layers::Layer& layer() { return *layer_; }
  TestParameters& params() { return params_; }
  Tensor& input(size_t i) { return inputs_.at(i); }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  const Tensor& output() const { return output_; }

  /// The output starts as garbage (1e30): forward must overwrite it.
  std::vector<float> forward(const layers::StepInfo& step = {}) {
    output_.fill(1e30f);
    layer_->forward(inputs_, output_, step);
    return output_.to_host();
  }

  /// Backward with grad_output `dy`; returns the input gradients (empty for inputs not in `want`).
  /// Every gradient starts as garbage (1e30), so a layer that accumulates instead of
  /// overwriting fails the checks.
  std::vector<std::vector<float>> backward(const std::vector<float>& dy, const layers::StepInfo& step = {},
                                           std::vector<bool> want = {}) {
    if (want.empty()) want.assign(inputs_.size(), true);
    Tensor grad_output(output_.shape(), "test_grad_output");
    grad_output.copy_from_host(dy);
    std::vector<Tensor> grads;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      grads.push_back(want[i] ? Tensor(inputs_[i].shape(), "test_grad_input") : Tensor());
      if (want[i]) grads.back().fill(1e30f);
    }
    for (const auto& p : params_.all())
      if (p->trainable) p->grad.fill(1e30f);
    layer_->backward(inputs_, output_, grad_output, grads, step);
    std::vector<std::vector<float>> out;
    for (const Tensor& g : grads) out.push_back(g.empty() ? std::vector<float>() : g.to_host());
    return out;
  }

  /// L = Σ y·r for the current inputs and parameters, accumulated in double.
  double objective(const std::vector<float>& r, const layers::StepInfo& step) {
    const std::vector<float> y = forward(step);
    double l = 0.0;
    for (size_t i = 0; i < y.size(); ++i) l += static_cast<double>(y[i]) * static_cast<double>(r[i]);
    return l;
  }

  struct Report {
    double worst_rel_error = 0.0;  // over every checked tensor
    std::string worst;             // which tensor and the check's details
    std::vector<std::string> lines;
    std::map<std::string, double> rel_error;  // per tensor: "input 0", "<layer>.weight", ...
  };

  /// Checks every input gradient and every trainable parameter gradient (every `stride`-th
  /// element) by central differences with step `h`; relative errors use max(|a|, |n|, floor).
  Report check_gradients(const layers::StepInfo& step, double h, double floor, size_t stride = 1,
                         unsigned r_seed = 77) {
    const std::vector<float> r = random_vector<float>(static_cast<size_t>(output_.numel()), r_seed);
    forward(step);
    const auto dx = backward(r, step);
    Report report;
    auto record = [&](const std::string& what, const GradientCheck& c) {
      report.lines.push_back(what + ": " + c.str());
      report.rel_error[what] = c.max_rel_error;
      if (c.max_rel_error >= report.worst_rel_error) {
        report.worst_rel_error = c.max_rel_error;
        report.worst = what + " " + c.str();
      }
    };
    // Parameter gradients are read before the finite differences run forward again.
    std::vector<std::pair<layers::Parameter*, std::vector<float>>> param_grads;
    for (const auto& p : params_.all())
      if (p->trainable) param_grads.emplace_back(p.get(), p->grad.to_host());

    for (size_t i = 0; i < inputs_.size(); ++i) {
      Tensor& x = inputs_[i];
      const std::vector<float> x0 = x.to_host();
      const std::function<double(const std::vector<float>&)> loss = [&](const std::vector<float>& v) {
        x.copy_from_host(v);
        return objective(r, step);
      };
      record("input " + std::to_string(i), check_gradient<float>(x0, dx[i], loss, h, floor, stride));
      x.copy_from_host(x0);
    }
    for (auto& entry : param_grads) {
      layers::Parameter* const p = entry.first;  // a plain variable: lambdas may not capture bindings in C++17
      const auto& grad = entry.second;
      const std::vector<float> v0 = p->value.to_host();
      const std::function<double(const std::vector<float>&)> loss = [&](const std::vector<float>& v) {
        p->value.copy_from_host(v);
        return objective(r, step);
      };
      record(p->name, check_gradient<float>(v0, grad, loss, h, floor, stride));
      p->value.copy_from_host(v0);
    }
    return report;
  }

 private:
  std::unique_ptr<layers::Layer> layer_;
  registry::OpFactory factory_;
  TestParameters params_;
  std::vector<Tensor> inputs_;
  Tensor output_;
};

}  // namespace tessera::testing
