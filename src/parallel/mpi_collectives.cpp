#include "tessera/parallel/mpi_collectives.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "tessera/core/half_float.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/parallel/wait_clock.hpp"

namespace tessera::parallel {
namespace {

int int_count(int64_t count, const char* call) {
  if (count > std::numeric_limits<int>::max())
    throw DistError(std::string(call) + " of " + std::to_string(count) + " values is too large");
  return static_cast<int>(count);
}

/// MPI's reduction of bf16 values (as MPI_UINT16_T): added in fp32, rounded once per pair.
void bf16_sum(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = half_float::to_bf16(half_float::from_bf16(a[i]) + half_float::from_bf16(b[i]));
}

/// The bf16 sum operation, made on first use (MPI is initialised by then) and kept until
/// MPI_Finalize frees it.
MPI_Op bf16_sum_op() {
  static MPI_Op op = [] {
    MPI_Op made = MPI_OP_NULL;
    check_mpi(MPI_Op_create(&bf16_sum, 1, &made), "MPI_Op_create");
    return made;
  }();
  return op;
}

void round_to_bf16(const float* data, int64_t count, std::vector<uint16_t>& out) {
  if (static_cast<int64_t>(out.size()) < count) out.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = half_float::to_bf16(data[i]);
}

}  // namespace

MpiCollectives::MpiCollectives(Communicator group, size_t slots, ElementType sum_type)
    : group_(std::move(group)),
      sum_type_(sum_type),
      requests_(2 * slots, MPI_REQUEST_NULL),
      copy_(slots),
      half_send_(slots),
      half_receive_(slots),
      pending_(slots) {
  if (sum_type_ == ElementType::fp16)
    throw Error("sums in fp16 would overflow where gradients exceed 65504; sum in fp32 or bf16");
}

MpiCollectives::~MpiCollectives() {
  // Errors are ignored: a destructor cannot throw, and the job is ending with another error.
  for (auto& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

void MpiCollectives::allgather(const float* send, float* receive, int64_t count) {
  if (group_.is_serial()) {
    std::copy(send, send + count, receive);
    return;
  }
  const int n = int_count(count, "MPI_Allgather");
  {
    const WaitClock::Scope waiting;
    check_mpi(MPI_Allgather(send, n, MPI_FLOAT, receive, n, MPI_FLOAT, group_.handle()), "MPI_Allgather");
  }
}

void MpiCollectives::reduce_scatter_sum(const float* send, float* receive, int64_t count) {
  group_.reduce_scatter_sum(send, receive, count);
}

void MpiCollectives::allreduce_sum(const Tensor& t) {
  if (sum_type_ == ElementType::bf16 && !group_.is_serial())
    bf16_allreduce_sum(t);
  else
    group_.allreduce_sum(t);
}

void MpiCollectives::bf16_allreduce_sum(const Tensor& t) {
  std::vector<float> values = t.to_host();
  const int64_t count = static_cast<int64_t>(values.size());
  const int n = int_count(count, "MPI_Allreduce");
  std::vector<uint16_t> mine, sum(values.size());
  round_to_bf16(values.data(), count, mine);
  {
    const WaitClock::Scope waiting;
    check_mpi(MPI_Allreduce(mine.data(), sum.data(), n, MPI_UINT16_T, bf16_sum_op(), group_.handle()), "MPI_Allreduce");
  }
  for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = half_float::from_bf16(sum[static_cast<size_t>(i)]);
  t.copy_from_host(values);
}

void MpiCollectives::start_bf16_sum(float* data, int64_t count, size_t slot) {
  MPI_Request* r = requests_of(slot);
  const int n = int_count(count, "bf16 all-reduce");
  std::vector<uint16_t>& send = half_send_.at(slot);
  std::vector<uint16_t>& receive = half_receive_.at(slot);
  round_to_bf16(data, count, send);
  if (static_cast<int64_t>(receive.size()) < count) receive.resize(static_cast<size_t>(count));
  if (group_.size() == 2) {
    const int peer = 1 - group_.rank();
    constexpr int tag = 0x4153;  // as the fp32 exchange's, one above
    check_mpi(MPI_Irecv(receive.data(), n, MPI_UINT16_T, peer, tag, group_.handle(), &r[0]), "MPI_Irecv");
    check_mpi(MPI_Isend(send.data(), n, MPI_UINT16_T, peer, tag, group_.handle(), &r[1]), "MPI_Isend");
    pending_[slot] = {data, count, false};
    return;
  }
  check_mpi(MPI_Iallreduce(send.data(), receive.data(), n, MPI_UINT16_T, bf16_sum_op(), group_.handle(), &r[0]),
            "MPI_Iallreduce");
  pending_[slot] = {data, count, true};
}

void MpiCollectives::start_allreduce_sum(float* data, int64_t count, size_t slot) {
  if (group_.is_serial()) return;  // the sum over one rank is its own values
  // Names the messages below as a gradient sum for a trace (MpiTrace), which sees 2 ranks'
  // exchange as point-to-point messages otherwise.
  const ProfileRegion region("gradient_bucket");
  MPI_Request* r = requests_of(slot);
  if (r[0] != MPI_REQUEST_NULL || r[1] != MPI_REQUEST_NULL || pending_.at(slot).data)
    throw DistError("all-reduce slot " + std::to_string(slot) + " started while its last sum is in flight");
  if (sum_type_ == ElementType::bf16) {
    start_bf16_sum(data, count, slot);
    return;
  }
  std::vector<float>& copy = copy_.at(slot);
  if (static_cast<int64_t>(copy.size()) < count) copy.resize(static_cast<size_t>(count));
  if (group_.size() == 2) {
    const int n = int_count(count, "all-reduce exchange"), peer = 1 - group_.rank();
    constexpr int tag = 0x4152;  // "AR": no other message of Tessera's carries it (MPI guarantees tags to 32767)
    check_mpi(MPI_Irecv(copy.data(), n, MPI_FLOAT, peer, tag, group_.handle(), &r[0]), "MPI_Irecv");
    check_mpi(MPI_Isend(data, n, MPI_FLOAT, peer, tag, group_.handle(), &r[1]), "MPI_Isend");
    pending_[slot] = {data, count};
    return;
  }
  std::copy(data, data + count, copy.begin());
  group_.start_allreduce_sum(copy.data(), data, count, &r[0]);
}

void MpiCollectives::add_received(size_t slot) {
  Pending& p = pending_.at(slot);
  if (!p.data) return;
  if (sum_type_ == ElementType::bf16) {
    const uint16_t* received = half_receive_[slot].data();
    const uint16_t* mine = half_send_[slot].data();
    // Both ranks of a pair add the same two rounded values, so they hold the same bits.
    for (int64_t i = 0; i < p.count; ++i)
      p.data[i] = p.widen ? half_float::from_bf16(received[i])
                          : half_float::from_bf16(mine[i]) + half_float::from_bf16(received[i]);
  } else {
    const float* received = copy_[slot].data();
    for (int64_t i = 0; i < p.count; ++i) p.data[i] += received[i];
  }
  p = Pending{};
}

bool MpiCollectives::test(size_t slot) {
  MPI_Request* r = requests_of(slot);
  if (r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL) {
    add_received(slot);
    return true;
  }
  // MPI_Testall is the call that advances the sum; an error surfaces in wait_all().
  int done = 0;
  MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE);
  if (done) add_received(slot);
  return done != 0;
}

void MpiCollectives::wait_all() {
  // A group of one starts nothing (and may run without MPI initialised).
  if (group_.is_serial()) return;
  group_.wait_all(static_cast<int>(requests_.size()), requests_.data());
  for (size_t slot = 0; slot < pending_.size(); ++slot) add_received(slot);
}

}  // namespace tessera::parallel
