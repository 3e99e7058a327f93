#include "tessera/parallel/halo_exchange.hpp"

#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/parallel/block_copy.hpp"
#include "tessera/parallel/mpi_halo_transport.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

// Backward messages get tags above every forward tag (directions are numbered 0..26).
constexpr int backward_tags = 27;
constexpr int64_t stamp_floats = HaloTransport::stamp_floats;

/// The size of a packed buffer holding `messages`.
int64_t end_of(const std::vector<PackedMessage>& messages) {
  return messages.empty() ? 0 : messages.back().offset + messages.back().count + stamp_floats;
}

}  // namespace

HaloExchange::HaloExchange(const ProcessGrid& grid, const Shape& local, const HaloWidths& halo,
                           const std::string& where, ElementType type)
    : plan_(grid.distribution(), grid.spatial_index(), local, halo, where), where_(where), type_(type) {
  owned_ = packed(plan_.sends(), 0);
  halos_ = packed(plan_.receives(), 0);
  owned_back_ = packed(plan_.sends(), backward_tags);
  halos_back_ = packed(plan_.receives(), backward_tags);
  transport_ = std::make_unique<MpiHaloTransport>(grid.spatial(), end_of(owned_), end_of(halos_), plan_.messages());
}

std::vector<PackedMessage> HaloExchange::packed(const std::vector<HaloBox>& boxes, int tag_base) const {
  std::vector<PackedMessage> messages;
  int64_t offset = 0;
  for (const auto& box : boxes) {
    // MPI counts are int, and each message carries its stamp.
    const int64_t words = words_for(box.count(), type_);
    if (words + stamp_floats > std::numeric_limits<int>::max())
      throw ShapeError(where_ + ": a halo message of more than 2^31 words (block " + plan_.local_shape().str() +
                       ", halo " + plan_.halo().str() + ")");
    messages.push_back({box.peer, tag_base + box.tag, offset, words});
    offset += words + stamp_floats;
  }
  return messages;
}

void HaloExchange::require_phase(Phase expected, const char* call) const {
  if (phase_ == expected) return;
  const char* state = phase_ == Phase::idle      ? "no exchange was started"
                      : phase_ == Phase::forward ? "a forward exchange is in flight"
                                                 : "a backward exchange is in flight";
  throw Error(where_ + ": halo exchange " + call + " called while " + state);
}

void HaloExchange::require_shape_of(const Tensor& t, const Shape& expected, const char* what) const {
  require_shape(t.shape() == expected, where_ + ": halo exchange got a " + what + " of shape " + t.shape().str() +
                                           ", expected " + expected.str());
  require_shape(t.type() == type_, where_ + ": halo exchange of " + element_type_name(type_) + " values got a " + what +
                                       " of " + element_type_name(t.type()));
}

void HaloExchange::post(HaloBuffer into, const std::vector<PackedMessage>& incoming, HaloBuffer from,
                        const std::vector<PackedMessage>& outgoing) {
  done_at_ = -1.0;
  if (incoming.empty() && outgoing.empty()) return;
  posted_at_ = transport_->post(into, incoming, from, outgoing);
  // The values' bytes, not the words': an odd count of 16-bit values pads its last word.
  const auto& boxes = from == HaloBuffer::owned ? plan_.sends() : plan_.receives();
  for (const auto& box : boxes) {
    const int64_t bytes = box.count() * static_cast<int64_t>(element_size(type_));
    bytes_sent_ += bytes;
    TrafficCounter::add(TrafficCounter::halo, static_cast<double>(bytes));
  }
}

void HaloExchange::wait(const std::vector<PackedMessage>& incoming) {
  if (plan_.messages() == 0) return;  // no neighbours: nothing to wait for or account
  const double waited = HaloAccount::now();
  // The receives (posted first) are the data this rank needs: their completion ends the
  // communication. A send may complete only later, once its receiver has called MPI (a
  // rendezvous message's receiver pulls it): that wait is for a neighbour still computing.
  transport_->wait_receives();
  const double received = done_at_ >= 0.0 ? done_at_ : HaloAccount::now();
  transport_->wait_sends();
  const double returned = HaloAccount::now();
  const double done = std::min(received, returned);
  // The messages could move once both this rank and the neighbour sending them had posted.
  double posted = posted_at_;
  for (const auto& m : incoming) posted = std::max(posted, transport_->sent_at(m));
  account_.blocked += returned - waited;
  account_.exposed += std::max(0.0, done - std::max(waited, posted));
  account_.in_flight += std::max(0.0, done - posted);
  account_.exchanges += 1;
}

void HaloExchange::progress() {
  // done_at_ marks the receives' completion, for the account.
  if (phase_ == Phase::idle || !transport_) return;
  if (transport_->progress() && done_at_ < 0.0) done_at_ = HaloAccount::now();
}

void HaloExchange::start_forward(const Tensor& local, const Tensor& padded, float boundary_value) {
  require_phase(Phase::idle, "start_forward");
  require_shape_of(local, local_shape(), "block");
  require_shape_of(padded, padded_shape(), "padded block");
  const Array5 block = Array5::of(local), out = Array5::of(padded);
  const Index5 origin{0, 0, 0, 0, 0};
  const auto& boxes = plan_.sends();
  for (size_t i = 0; i < boxes.size(); ++i)
    copy_sub_box("tessera::halo_pack", block, boxes[i].offset,
                 Array5::in_buffer(transport_->buffer(HaloBuffer::owned), owned_[i].offset, boxes[i].extent, type_), origin,
                 boxes[i].extent);
  post(HaloBuffer::halo, halos_, HaloBuffer::owned, owned_);
  // The interior and the boundary need no message: done while the halos are in flight.
  copy_sub_box("tessera::halo_interior", block, origin, out, plan_.interior_offset(), block.extents);
  for (const auto& b : plan_.boundary())
    fill_sub_box("tessera::halo_boundary", out, b.offset, b.extent, boundary_value);
  target_ = padded;
  phase_ = Phase::forward;
}

void HaloExchange::finish_forward() {
  require_phase(Phase::forward, "finish_forward");
  phase_ = Phase::idle;
  const Tensor padded = std::move(target_);
  target_ = Tensor();
  wait(halos_);
  if (halos_.empty()) return;
  transport_->deliver();
  const Array5 out = Array5::of(padded);
  const auto& boxes = plan_.receives();
  for (size_t i = 0; i < boxes.size(); ++i)
    copy_sub_box("tessera::halo_unpack",
                 Array5::in_buffer(transport_->buffer(HaloBuffer::halo), halos_[i].offset, boxes[i].extent, type_),
                 {0, 0, 0, 0, 0}, out, boxes[i].offset, boxes[i].extent);
}

void HaloExchange::start_backward(const Tensor& grad_padded, const Tensor& grad_local) {
  require_phase(Phase::idle, "start_backward");
  require_shape_of(grad_padded, padded_shape(), "padded gradient");
  require_shape_of(grad_local, local_shape(), "block gradient");
  const Array5 in = Array5::of(grad_padded), block = Array5::of(grad_local);
  const Index5 origin{0, 0, 0, 0, 0};
  const auto& boxes = plan_.receives();
  for (size_t i = 0; i < boxes.size(); ++i)
    copy_sub_box("tessera::halo_pack", in, boxes[i].offset,
                 Array5::in_buffer(transport_->buffer(HaloBuffer::halo), halos_[i].offset, boxes[i].extent, type_), origin,
                 boxes[i].extent);
  post(HaloBuffer::owned, owned_back_, HaloBuffer::halo, halos_back_);
  copy_sub_box("tessera::halo_interior", in, plan_.interior_offset(), block, origin, block.extents);
  target_ = grad_local;
  phase_ = Phase::backward;
}

void HaloExchange::finish_backward() {
  require_phase(Phase::backward, "finish_backward");
  phase_ = Phase::idle;
  const Tensor grad_local = std::move(target_);
  target_ = Tensor();
  wait(owned_back_);
  if (owned_.empty()) return;
  transport_->deliver();
  const Array5 block = Array5::of(grad_local);
  // One kernel per message, in the fixed order of the plan's sends, so overlapping parts (an
  // edge part lies inside two face parts) add up the same way on every run.
  const auto& boxes = plan_.sends();
  for (size_t i = 0; i < boxes.size(); ++i)
    add_sub_box("tessera::halo_accumulate",
                Array5::in_buffer(transport_->buffer(HaloBuffer::owned), owned_[i].offset, boxes[i].extent, type_),
                {0, 0, 0, 0, 0}, block, boxes[i].offset, boxes[i].extent);
}

}  // namespace tessera::parallel
