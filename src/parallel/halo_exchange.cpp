#include "tessera/parallel/halo_exchange.hpp"

#include <chrono>
#include <cstring>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/parallel/traffic_counter.hpp"

namespace tessera::parallel {
namespace {

constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
const char* const dimension_names[3] = {"depth", "height", "width"};

/// The directions from a block to its 26 neighbours, each component in {-1, 0, 1}, numbered
/// 0..26 (13, the block itself, is never used); the number is the message tag.
int direction_number(const std::array<int, 3>& d) { return (d[0] + 1) * 9 + (d[1] + 1) * 3 + (d[2] + 1); }
// Backward messages get tags above every forward tag.
constexpr int backward_tags = 27;

int64_t volume_of(const Index5& e) { return e[0] * e[1] * e[2] * e[3] * e[4]; }

// Every message ends with its sender's post time, a double in two floats' room.
constexpr int64_t stamp_floats = sizeof(double) / sizeof(float);
static_assert(stamp_floats * sizeof(float) == sizeof(double));

/// Seconds on the steady clock, which the processes of one node share (CLOCK_MONOTONIC).
double clock_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

HaloExchange::HaloExchange(const ProcessGrid& grid, const Shape& local, const HaloWidths& halo,
                           const std::string& where)
    : spatial_(grid.spatial()), local_(local), padded_(local), halo_(halo), where_(where) {
  require_shape(local.rank() == 4 || local.rank() == 5,
                where + ": halo exchange needs a block [N, H, W, C] or [N, D, H, W, C], not " + local.str());
  const Index5 block = extents5_of(local);
  const auto parts = grid.spatial_parts();
  const auto& index = grid.spatial_index();
  if (local.rank() == 4)
    require_shape(halo.before[0] == 0 && halo.after[0] == 0 && parts[0] == 1,
                  where + ": a 2D block " + local.str() + " has no depth to split or pad (halo " + halo.str() +
                      ", distribution " + grid.distribution().str() + ")");
  for (size_t k = 0; k < 3; ++k) {
    const int64_t extent = block[k + 1];
    require_shape(halo.before[k] >= 0 && halo.after[k] >= 0,
                  where + ": negative " + dimension_names[k] + " halo (" + halo.str() + ")");
    // A halo takes data from the next block only; wider ones would need the block after it.
    // Without a neighbour (one part) the whole halo is boundary, of any width.
    for (const int64_t width : {halo.before[k], halo.after[k]})
      require_shape(parts[k] == 1 || width <= extent,
                    where + ": a " + dimension_names[k] + " halo of " + std::to_string(width) +
                        " is wider than the neighbouring block's " + dimension_names[k] + " of " +
                        std::to_string(extent) + " (block " + local.str() + ", distribution " +
                        grid.distribution().str() + ")");
    if (local.rank() == 5 || k > 0) padded_[static_cast<int>(k) + local.rank() - 4] += halo.before[k] + halo.after[k];
  }

  int64_t owned_count = 0, halo_count = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const std::array<int, 3> dir{dz, dy, dx};
        if (dz == 0 && dy == 0 && dx == 0) continue;
        // Along each axis: the halo region in the padded block in this direction, and the part
        // of this block the neighbour in this direction needs for its halo facing us.
        Index5 region_offset{0, 0, 0, 0, 0}, region_extent = block, part_offset{0, 0, 0, 0, 0}, part_extent = block;
        std::array<int, 3> neighbour{};
        bool exists = true;
        for (size_t k = 0; k < 3; ++k) {
          const int64_t extent = block[k + 1], b = halo.before[k], a = halo.after[k];
          const size_t i = k + 1;
          if (dir[k] < 0) {
            region_offset[i] = 0, region_extent[i] = b;
            part_offset[i] = 0, part_extent[i] = a;
          } else if (dir[k] == 0) {
            region_offset[i] = b, region_extent[i] = extent;
          } else {
            region_offset[i] = b + extent, region_extent[i] = a;
            part_offset[i] = extent - b, part_extent[i] = b;
          }
          neighbour[k] = index[k] + dir[k];
          exists = exists && neighbour[k] >= 0 && neighbour[k] < parts[k];
        }
        if (!exists) {
          if (volume_of(region_extent) > 0) boundary_.push_back({region_offset, region_extent});
          continue;
        }
        const int peer = grid.spatial_rank_of(neighbour);
        const int64_t region_count = volume_of(region_extent), part_count = volume_of(part_extent);
        if (region_count + stamp_floats > std::numeric_limits<int>::max() ||
            part_count + stamp_floats > std::numeric_limits<int>::max())
          throw ShapeError(where + ": a halo message of more than 2^31 elements (block " + local.str() + ", halo " +
                           halo.str() + ")");
        if (region_count > 0) {
          halos_.push_back({peer, direction_number(dir), region_offset, region_extent, halo_count, region_count});
          halo_count += region_count + stamp_floats;
        }
        if (part_count > 0) {
          owned_.push_back(
              {peer, direction_number({-dz, -dy, -dx}), part_offset, part_extent, owned_count, part_count});
          owned_count += part_count + stamp_floats;
        }
      }
  owned_buffer_ = DeviceView<float>("tessera::halo_owned", static_cast<size_t>(owned_count));
  halo_buffer_ = DeviceView<float>("tessera::halo_regions", static_cast<size_t>(halo_count));
  if constexpr (!host_accessible) {
    owned_host_ = Kokkos::create_mirror_view(owned_buffer_);
    halo_host_ = Kokkos::create_mirror_view(halo_buffer_);
  }
  in_flight_ = InFlight(owned_.size() + halos_.size());
}

HaloExchange::~HaloExchange() { in_flight_.wait_quietly(); }

void HaloExchange::InFlight::wait_quietly() noexcept {
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

HaloExchange::InFlight& HaloExchange::InFlight::operator=(InFlight&& o) noexcept {
  if (this != &o) {
    wait_quietly();
    requests_ = std::move(o.requests_);
    o.requests_.clear();
  }
  return *this;
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
}

float* HaloExchange::host_data(const DeviceView<float>& buffer, const DeviceView<float>::HostMirror& host) {
  if constexpr (host_accessible) return buffer.data();
  return host.data();
}

void HaloExchange::post(const std::vector<Message>& incoming, const DeviceView<float>& receive_buffer,
                        const DeviceView<float>::HostMirror& receive_host, const std::vector<Message>& outgoing,
                        const DeviceView<float>& send_buffer, const DeviceView<float>::HostMirror& send_host,
                        int tag_base) {
  done_at_ = -1.0;
  if (incoming.empty() && outgoing.empty()) return;
  // The packing kernels must be done before MPI reads the buffers, and the previous exchange's
  // unpacking before MPI overwrites them.
  Kokkos::fence();
  if constexpr (!host_accessible) Kokkos::deep_copy(send_host, send_buffer);
  float* receive = host_data(receive_buffer, receive_host);
  float* send = host_data(send_buffer, send_host);
  auto& requests = in_flight_.requests();
  size_t r = 0;
  for (const auto& m : incoming)
    check_mpi(MPI_Irecv(receive + m.buffer_offset, static_cast<int>(m.count + stamp_floats), MPI_FLOAT, m.peer,
                        tag_base + m.tag, spatial_.handle(), &requests[r++]),
              "MPI_Irecv");
  posted_at_ = clock_seconds();
  for (const auto& m : outgoing) {
    std::memcpy(send + m.buffer_offset + m.count, &posted_at_, sizeof posted_at_);
    check_mpi(MPI_Isend(send + m.buffer_offset, static_cast<int>(m.count + stamp_floats), MPI_FLOAT, m.peer,
                        tag_base + m.tag, spatial_.handle(), &requests[r++]),
              "MPI_Isend");
    bytes_sent_ += m.count * static_cast<int64_t>(sizeof(float));
    TrafficCounter::add(TrafficCounter::halo, static_cast<double>(m.count) * sizeof(float));
  }
}

void HaloExchange::wait(const std::vector<Message>& incoming, const float* receive) {
  auto& requests = in_flight_.requests();
  if (requests.empty()) return;  // no neighbours: nothing to wait for or account
  const double waited = clock_seconds();
  // The receives (posted first) are the data this rank needs: their completion ends the
  // communication. A send may complete only later, once its receiver has called MPI (a
  // rendezvous message's receiver pulls it): that wait is for a neighbour still computing.
  const int receives = static_cast<int>(incoming.size());
  spatial_.wait_all(receives, requests.data());
  const double received = done_at_ >= 0.0 ? done_at_ : clock_seconds();
  spatial_.wait_all(static_cast<int>(requests.size()) - receives, requests.data() + receives);
  const double returned = clock_seconds();
  const double done = std::min(received, returned);
  // The messages could move once both this rank and the neighbour sending them had posted.
  double posted = posted_at_;
  for (const auto& m : incoming) {
    double sent_at = 0.0;
    std::memcpy(&sent_at, receive + m.buffer_offset + m.count, sizeof sent_at);
    posted = std::max(posted, sent_at);
  }
  account_.blocked += returned - waited;
  account_.exposed += std::max(0.0, done - std::max(waited, posted));
  account_.in_flight += std::max(0.0, done - posted);
  account_.exchanges += 1;
}

void HaloExchange::progress() {
  // MPI moves large (rendezvous) messages only inside MPI calls: a test now and then lets
  // them advance while the caller computes. done_at_ marks the receives' completion.
  if (phase_ == Phase::idle || spatial_.is_serial()) return;
  auto& requests = in_flight_.requests();
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  if (done_at_ >= 0.0) return;
  const int receives = static_cast<int>(phase_ == Phase::forward ? halos_.size() : owned_.size());
  int received = done;
  if (!done && receives > 0)
    check_mpi(MPI_Testall(receives, requests.data(), &received, MPI_STATUSES_IGNORE), "MPI_Testall");
  if (received) done_at_ = clock_seconds();
}

void HaloExchange::start_forward(const Tensor& local, const Tensor& padded, float boundary_value) {
  require_phase(Phase::idle, "start_forward");
  require_shape_of(local, local_, "block");
  require_shape_of(padded, padded_, "padded block");
  const Array5 block = Array5::of(local), out = Array5::of(padded);
  const Index5 origin{0, 0, 0, 0, 0};
  for (const auto& m : owned_)
    copy_sub_box("tessera::halo_pack", block, m.offset, Array5::in_buffer(owned_buffer_, m.buffer_offset, m.extent),
                 origin, m.extent);
  post(halos_, halo_buffer_, halo_host_, owned_, owned_buffer_, owned_host_, 0);
  // The interior and the boundary need no message: done while the halos are in flight.
  copy_sub_box("tessera::halo_interior", block, origin, out, {0, halo_.before[0], halo_.before[1], halo_.before[2], 0},
               block.extents);
  for (const auto& b : boundary_) fill_sub_box("tessera::halo_boundary", out, b.offset, b.extent, boundary_value);
  target_ = padded;
  phase_ = Phase::forward;
}

void HaloExchange::finish_forward() {
  require_phase(Phase::forward, "finish_forward");
  phase_ = Phase::idle;
  const Tensor padded = std::move(target_);
  target_ = Tensor();
  wait(halos_, host_data(halo_buffer_, halo_host_));
  if (halos_.empty()) return;
  if constexpr (!host_accessible) Kokkos::deep_copy(halo_buffer_, halo_host_);
  const Array5 out = Array5::of(padded);
  for (const auto& m : halos_)
    copy_sub_box("tessera::halo_unpack", Array5::in_buffer(halo_buffer_, m.buffer_offset, m.extent), {0, 0, 0, 0, 0},
                 out, m.offset, m.extent);
}

void HaloExchange::start_backward(const Tensor& grad_padded, const Tensor& grad_local) {
  require_phase(Phase::idle, "start_backward");
  require_shape_of(grad_padded, padded_, "padded gradient");
  require_shape_of(grad_local, local_, "block gradient");
  const Array5 in = Array5::of(grad_padded), block = Array5::of(grad_local);
  const Index5 origin{0, 0, 0, 0, 0};
  for (const auto& m : halos_)
    copy_sub_box("tessera::halo_pack", in, m.offset, Array5::in_buffer(halo_buffer_, m.buffer_offset, m.extent), origin,
                 m.extent);
  post(owned_, owned_buffer_, owned_host_, halos_, halo_buffer_, halo_host_, backward_tags);
  copy_sub_box("tessera::halo_interior", in, {0, halo_.before[0], halo_.before[1], halo_.before[2], 0}, block, origin,
               block.extents);
  target_ = grad_local;
  phase_ = Phase::backward;
}

void HaloExchange::finish_backward() {
  require_phase(Phase::backward, "finish_backward");
  phase_ = Phase::idle;
  const Tensor grad_local = std::move(target_);
  target_ = Tensor();
  wait(owned_, host_data(owned_buffer_, owned_host_));
  if (owned_.empty()) return;
  if constexpr (!host_accessible) Kokkos::deep_copy(owned_buffer_, owned_host_);
  const Array5 block = Array5::of(grad_local);
  // One kernel per message, in the fixed order of owned_, so overlapping parts (an edge part
  // lies inside two face parts) add up the same way on every run.
  for (const auto& m : owned_)
    add_sub_box("tessera::halo_accumulate", Array5::in_buffer(owned_buffer_, m.buffer_offset, m.extent),
                {0, 0, 0, 0, 0}, block, m.offset, m.extent);
}

}  // namespace tessera::parallel
