#include "tessera/train/trainer_state.hpp"

#include <cstring>

#include "tessera/core/error.hpp"
#include "tessera/parallel/peer_exchange.hpp"

namespace tessera::train {
namespace {

std::vector<float> host_copy(const Tensor& t) { return t.empty() ? std::vector<float>{} : t.to_host(); }

void copy_into(const Tensor& t, const std::vector<float>& data, const char* what) {
  const int64_t n = t.empty() ? 0 : t.numel();
  if (n != static_cast<int64_t>(data.size()))
    throw Error(std::string("trainer state: ") + what + " holds " + std::to_string(data.size()) +
                " values, this model " + std::to_string(n));
  if (n > 0) {
    Tensor target = t;
    target.copy_from_host(data);
  }
}

// Doubles and the step count travel bit for bit inside the float message, two floats each.
void append_bits(std::vector<float>& out, const void* value) {
  float halves[2];
  std::memcpy(halves, value, sizeof halves);
  out.insert(out.end(), halves, halves + 2);
}
template <class T>
T read_bits(const float* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}
static_assert(sizeof(double) == 2 * sizeof(float) && sizeof(int64_t) == 2 * sizeof(float));

}  // namespace

TrainerState TrainerState::capture(const model::ParameterStore& params, optim::Optimizer& optimizer) {
  TrainerState s;
  s.values = host_copy(params.values());
  s.buffers = host_copy(params.buffers());
  for (const auto& [name, tensor] : optimizer.state()) {
    const auto part = host_copy(tensor);
    s.optimizer_state.insert(s.optimizer_state.end(), part.begin(), part.end());
  }
  s.optimizer_steps = optimizer.steps();
  for (const auto& [key, value] : optimizer.hyperparameters()) s.hyperparameters.push_back(value);
  return s;
}

void TrainerState::install_model(model::ParameterStore& params) const {
  copy_into(params.values(), values, "parameters");
  copy_into(params.buffers(), buffers, "buffers");
}

void TrainerState::install(model::ParameterStore& params, optim::Optimizer& optimizer) const {
  install_model(params);
  size_t at = 0;
  for (const auto& [name, tensor] : optimizer.state()) {
    const auto n = static_cast<size_t>(tensor.empty() ? 0 : tensor.numel());
    if (at + n > optimizer_state.size()) throw Error("trainer state: optimizer state '" + name + "' is missing");
    copy_into(tensor,
              std::vector<float>(optimizer_state.begin() + static_cast<std::ptrdiff_t>(at),
                                 optimizer_state.begin() + static_cast<std::ptrdiff_t>(at + n)),
              "optimizer state");
    at += n;
  }
  if (at != optimizer_state.size()) throw Error("trainer state: more optimizer state than this optimizer holds");
  optimizer.set_steps(optimizer_steps);
  size_t k = 0;
  const auto keys = optimizer.hyperparameters();
  if (keys.size() != hyperparameters.size())
    throw Error("trainer state: " + std::to_string(hyperparameters.size()) +
                " hyper-parameters for an optimizer with " + std::to_string(keys.size()));
  for (const auto& [key, unused] : keys) optimizer.set_hyperparameter(key, hyperparameters[k++], "$.optimizer");
}

std::vector<float> TrainerState::packed() const {
  std::vector<float> out;
  out.reserve(values.size() + buffers.size() + optimizer_state.size() + 2 + 2 * hyperparameters.size());
  out.insert(out.end(), values.begin(), values.end());
  out.insert(out.end(), buffers.begin(), buffers.end());
  out.insert(out.end(), optimizer_state.begin(), optimizer_state.end());
  append_bits(out, &optimizer_steps);
  for (const double& h : hyperparameters) append_bits(out, &h);
  return out;
}

TrainerState TrainerState::unpacked(const std::vector<float>& data, const TrainerState& like) {
  TrainerState s;
  const float* at = data.data();
  auto take = [&](size_t n) {
    std::vector<float> part(at, at + n);
    at += n;
    return part;
  };
  s.values = take(like.values.size());
  s.buffers = take(like.buffers.size());
  s.optimizer_state = take(like.optimizer_state.size());
  s.optimizer_steps = read_bits<int64_t>(at);
  at += 2;
  for (size_t k = 0; k < like.hyperparameters.size(); ++k, at += 2) s.hyperparameters.push_back(read_bits<double>(at));
  return s;
}

TrainerState TrainerState::exchange(const parallel::Communicator& peers, int partner) const {
  return unpacked(parallel::exchange_floats(peers, partner, packed(), "tournament exchange"), *this);
}

void TrainerState::send(const parallel::Communicator& peers, int to) const {
  parallel::send_floats(peers, to, packed(), "tournament exchange");
}

TrainerState TrainerState::receive(const parallel::Communicator& peers, int from, const TrainerState& like) {
  const auto size = static_cast<int64_t>(like.packed().size());
  return unpacked(parallel::receive_floats(peers, from, size, "tournament exchange"), like);
}

}  // namespace tessera::train
