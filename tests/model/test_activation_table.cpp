// The activation table (ops/activations.hpp) and what follows it: every kind has its row, a
// row added to the table alone reaches the kernels, the docs and the builder, and the docs
// list exactly the table's rows.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

#include "support/double_views.hpp"
#include "support/gradient_check.hpp"
#include "support/test_parameters.hpp"
#include "tessera/backends/kokkos/activation_kernels.hpp"
#include "tessera/backends/kokkos/kokkos_backend.hpp"
#include "tessera/layers/activation.hpp"
#include "tessera/model/layer_entry.hpp"
#include "tessera/model/layer_registry.hpp"
#include "tessera/ops/activation_docs.hpp"
#include "tessera/registry/op_factory.hpp"

using namespace tessera;
namespace kb = tessera::kokkos_backend;
using testing::check_gradient;
using testing::device_copy;
using testing::DoubleView;
using testing::host_copy;
using testing::random_vector;

// Named rather than anonymous: the row's type is a template argument of the kernels' device
// lambdas, which nvcc requires to have a name outside this file's unnamed namespace.
namespace activation_table_test {

/// A row that exists only here: y = x − k·x³, not monotone for k > 0. Its kind is the first
/// past the table's.
struct Cubic {
  static constexpr ops::EltwiseKind kind = static_cast<ops::EltwiseKind>(ops::Activations::size);
  static constexpr const char* name = "cubic";
  static constexpr const char* formula = "`x − k·x³`";
  static constexpr ops::ActivationKey key{"k", 0.0, 1.0, 0.5, "weight of the cube"};
  static constexpr ops::OnednnEltwise onednn = ops::OnednnEltwise::none;
  static constexpr bool non_decreasing(double k) { return k <= 0.0; }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T value(T x, T k) {
    return x - k * x * x * x;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static T derivative(T x, T k) {
    return T(1) - T(3) * k * x * x;
  }
};

using WithCubic = ops::ActivationList<ops::activations::Relu, ops::activations::LeakyRelu, ops::activations::Elu,
                                      ops::activations::Tanh, ops::activations::Scale, ops::activations::Gelu,
                                      ops::activations::Sigmoid, Cubic>;

}  // namespace activation_table_test

using activation_table_test::Cubic;
using activation_table_test::WithCubic;

namespace {

template <class Rows>
std::vector<double> forward(const kb::ActivationFunction<double, Rows>& f, const std::vector<double>& x) {
  DoubleView y("y", x.size());
  kb::activation_forward<double>(f, device_copy(x), static_cast<int64_t>(x.size()), y);
  return host_copy(y);
}

/// The largest relative error of f's kernel derivative against central differences of its
/// kernel value, for inputs away from the kinks at 0.
template <class Rows>
double derivative_error(const kb::ActivationFunction<double, Rows>& f) {
  auto x = random_vector<double>(100, 7u, -3.0, 3.0);
  for (auto& v : x)
    if (std::abs(v) < 0.05) v += v < 0 ? -0.05 : 0.05;
  const auto r = random_vector<double>(x.size(), 8u, 0.5, 1.5);
  DoubleView dx("dx", x.size());
  kb::activation_backward<double>(f, device_copy(x), device_copy(r), static_cast<int64_t>(x.size()), dx);
  const auto loss = [&](const std::vector<double>& v) {
    const auto y = forward(f, v);
    double l = 0.0;
    for (size_t i = 0; i < v.size(); ++i) l += y[i] * r[i];
    return l;
  };
  return check_gradient<double>(x, host_copy(dx), loss, 1e-5, 1e-6).max_rel_error;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("every activation kind has its row, and the registry and the layer follow it", "[model][activations]") {
  const auto types = model::layer_types();
  for (const ops::ActivationInfo& row : ops::activation_rows()) {
    INFO(row.name);
    CHECK(ops::activation_info(row.kind).name == std::string(row.name));
    CHECK(std::string(row.formula).size() > 0);
    CHECK(std::find(types.begin(), types.end(), row.name) != types.end());
    nlohmann::json entry = nlohmann::json::object();
    ConfigObject cfg(entry, "$.layers[0]");
    const auto layer = layers::Activation::from_config(row.kind, "a", cfg);
    CHECK(layer->type() == row.name);
    CHECK(layer->traits().commutes_with_max_pool == row.non_decreasing(row.key.fallback));
  }
  CHECK_THROWS_AS(ops::activation_info(Cubic::kind), Error);
}

TEST_CASE("every row's derivative matches finite differences of its value", "[model][activations][gradient]") {
  for (const ops::ActivationInfo& row : ops::activation_rows()) {
    INFO(row.name);
    const kb::ActivationFunction<double> f{row.kind, row.key.name ? 0.3 : 0.0};
    CHECK(derivative_error(f) < 1e-6);
  }
}

TEST_CASE("a row added to the table alone reaches the kernels, the docs and the builder", "[model][activations]") {
  // The kernels the Kokkos op runs, dispatched by kind over the longer table.
  const kb::ActivationFunction<double, WithCubic> cubic{Cubic::kind, 0.5};
  const auto y = forward(cubic, {-2.0, 0.0, 1.0, 2.0});
  CHECK(y == std::vector<double>{2.0, 0.0, 0.5, -2.0});
  CHECK(derivative_error(cubic) < 1e-6);
  const kb::ActivationFunction<double, WithCubic> leaky{ops::EltwiseKind::leaky_relu, 0.1};
  CHECK(forward(leaky, {-2.0, 3.0}) == std::vector<double>{-0.2, 3.0});

  // The docs' list and key table.
  const std::string docs = ops::activation_docs(ops::activation_rows<WithCubic>());
  CHECK(docs.find("### relu, leaky_relu, elu, tanh, scale, gelu, sigmoid, cubic\n") == 0);
  CHECK(docs.find("`cubic`: `x − k·x³`.\n") != std::string::npos);
  CHECK(docs.find("| `k` | number in [0, 1] | `0.5` | `cubic` | weight of the cube |\n") != std::string::npos);
  CHECK(ops::activation_type_list(ops::activation_rows<WithCubic>()).find(", `sigmoid`, `cubic`") != std::string::npos);

  // The builder's entry, with and without its key.
  const auto entry = model::spec::activation<Cubic>(0.25);
  CHECK(entry.type() == "cubic");
  CHECK(entry.keys() == nlohmann::json{{"k", 0.25}});
  CHECK(model::spec::activation<Cubic>().keys().empty());

  // Not monotone: the graph must keep it before a max pool.
  CHECK_FALSE(ops::info_of<Cubic>().non_decreasing(0.5));
}

TEST_CASE("docs/config.md lists the table's activations and keys", "[model][activations][docs]") {
  const std::string docs = file_text(std::string(TESSERA_SOURCE_DIR) + "/docs/config.md");
  REQUIRE_FALSE(docs.empty());
  const auto rows = ops::activation_rows();
  CHECK(docs.find(ops::activation_docs(rows)) != std::string::npos);
  CHECK(docs.find("| " + ops::activation_type_list(rows) + " | 1 | any | same |") != std::string::npos);
}

TEST_CASE("an activation without a oneDNN algorithm runs on Kokkos under the auto backend", "[model][activations]") {
  // GELU's row names no oneDNN algorithm: the oneDNN backend declines it and Kokkos runs it.
  nlohmann::json entry = nlohmann::json::object();
  ConfigObject cfg(entry, "$.layers[0]");
  auto gelu = model::make_layer("gelu", "g", cfg);
  const registry::OpFactory factory("auto");
  layers::LayerContext ctx;
  ctx.ops = &factory;
  testing::TestParameters params;
  const Shape shape{1, 2, 2, 2, 3};
  gelu->setup({shape}, ctx, params);
  CHECK(gelu->backend() == "kokkos");
  Tensor x(shape), y(shape);
  const auto xs = random_vector<float>(static_cast<size_t>(shape.numel()), 5u, -3.0, 3.0);
  x.copy_from_host(xs);
  gelu->forward({x}, y, {});
  const auto ys = y.to_host();
  double worst = 0.0;
  for (size_t i = 0; i < xs.size(); ++i)
    worst = std::max(worst, std::abs(ys[i] - 0.5 * xs[i] * (1.0 + std::erf(xs[i] / std::sqrt(2.0)))));
  CHECK(worst < 1e-6);
}
