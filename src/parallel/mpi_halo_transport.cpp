#include "tessera/parallel/mpi_halo_transport.hpp"

#include <cstring>
#include <string>

#include "tessera/parallel/halo_account.hpp"

namespace tessera::parallel {
namespace {

static_assert(HaloTransport::stamp_floats * sizeof(float) == sizeof(double));

}  // namespace

MpiHaloTransport::MpiHaloTransport(Communicator group, int64_t owned_count, int64_t halo_count, size_t messages)
    : group_(std::move(group)), requests_(messages, MPI_REQUEST_NULL), progress_thread_(MpiProgressThread::acquire()) {
  buffers_[index(HaloBuffer::owned)] = DeviceView<float>("tessera::halo_owned", static_cast<size_t>(owned_count));
  buffers_[index(HaloBuffer::halo)] = DeviceView<float>("tessera::halo_regions", static_cast<size_t>(halo_count));
  if constexpr (!kHostAccessible)
    for (size_t b = 0; b < 2; ++b) hosts_[b] = Kokkos::create_mirror_view(buffers_[b]);
}

MpiHaloTransport::~MpiHaloTransport() {
  stop_watching();
  // Errors are ignored: a destructor cannot throw, and the job is ending with another error.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

float* MpiHaloTransport::host_data(HaloBuffer which) const {
  if constexpr (kHostAccessible) return buffers_[index(which)].data();
  return hosts_[index(which)].data();
}

double MpiHaloTransport::post(HaloBuffer into, const std::vector<PackedMessage>& receives, HaloBuffer from,
                              const std::vector<PackedMessage>& sends) {
  if (receives.size() + sends.size() > requests_.size())
    throw DistError("halo transport: " + std::to_string(receives.size() + sends.size()) +
                    " messages posted, room for " + std::to_string(requests_.size()));
  stop_watching();
  // The packing kernels must be done before MPI reads the buffers, and the previous exchange's
  // unpacking before MPI overwrites them.
  Kokkos::fence();
  if constexpr (!kHostAccessible) Kokkos::deep_copy(hosts_[index(from)], buffers_[index(from)]);
  float* receive = host_data(into);
  float* send = host_data(from);
  size_t r = 0;
  for (const auto& m : receives)
    check_mpi(MPI_Irecv(receive + m.offset, static_cast<int>(m.count + stamp_floats), MPI_FLOAT, m.peer, m.tag,
                        group_.handle(), &requests_[r++]),
              "MPI_Irecv");
  const double posted_at = HaloAccount::now();
  for (const auto& m : sends) {
    std::memcpy(send + m.offset + m.count, &posted_at, sizeof posted_at);
    check_mpi(MPI_Isend(send + m.offset, static_cast<int>(m.count + stamp_floats), MPI_FLOAT, m.peer, m.tag,
                        group_.handle(), &requests_[r++]),
              "MPI_Isend");
  }
  receives_ = receives.size();
  posted_ = r;
  into_ = into;
  received_ = false;
  if (progress_thread_ && posted_ > 0) progress_thread_->watch(this, [this] { return test_in_flight(); });
  return posted_at;
}

bool MpiHaloTransport::test_in_flight() {
  // An error ends the polling; the caller's wait reports it.
  int done = 0;
  if (MPI_Testall(static_cast<int>(posted_), requests_.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return true;
  if (done) {
    received_ = true;
    return true;
  }
  if (!received_ && receives_ > 0) {
    int received = 0;
    if (MPI_Testall(static_cast<int>(receives_), requests_.data(), &received, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return true;
    if (received) received_ = true;
  }
  return false;
}

void MpiHaloTransport::stop_watching() {
  if (progress_thread_) progress_thread_->forget(this);
}

bool MpiHaloTransport::progress() {
  // MPI moves large (rendezvous) messages only inside MPI calls: a test now and then lets
  // them advance while the caller computes. With a progress thread that thread tests them.
  if (posted_ == 0) return false;
  if (!progress_thread_) test_in_flight();
  return received_;
}

void MpiHaloTransport::wait_receives() {
  stop_watching();
  group_.wait_all(static_cast<int>(receives_), requests_.data());
  received_ = true;
}

void MpiHaloTransport::wait_sends() {
  stop_watching();
  group_.wait_all(static_cast<int>(posted_ - receives_), requests_.data() + receives_);
}

double MpiHaloTransport::sent_at(const PackedMessage& received) const {
  double t = 0.0;
  std::memcpy(&t, host_data(into_) + received.offset + received.count, sizeof t);
  return t;
}

void MpiHaloTransport::deliver() {
  if constexpr (!kHostAccessible) Kokkos::deep_copy(buffers_[index(into_)], hosts_[index(into_)]);
}

}  // namespace tessera::parallel
