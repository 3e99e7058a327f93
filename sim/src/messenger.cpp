#include "messenger.hpp"

#include <cmath>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Mailbox.hpp>

namespace tessera::sim {
namespace {
int token = 0;  // the payload every message carries: only its simulated size matters
}

std::string Messenger::mailbox(int from, int to) const {
  return std::to_string(from) + '>' + std::to_string(to) + '#' + std::to_string(channel_);
}

simgrid::s4u::CommPtr Messenger::send(int to, double bytes) {
  return simgrid::s4u::Mailbox::by_name(mailbox(rank_, to))->put_async(&token, static_cast<uint64_t>(std::llround(bytes)));
}

simgrid::s4u::CommPtr Messenger::receive(int from) {
  return simgrid::s4u::Mailbox::by_name(mailbox(from, rank_))->get_async<void>(&received_);
}

void Messenger::leave_node(const std::vector<int>& peers) {
  if (platform_.software_latency <= 0) return;
  for (const int peer : peers)
    if (platform_.host_of(peer) != platform_.host_of(rank_)) {
      simgrid::s4u::this_actor::sleep_for(platform_.software_latency);
      return;
    }
}

void Messenger::send_and_wait(int to, double bytes) {
  leave_node({to});
  send(to, bytes)->wait();
}

void Messenger::sendrecv(int to, double bytes, int from) {
  leave_node({to});
  auto s = send(to, bytes);
  auto r = receive(from);
  s->wait();
  r->wait();
}

void Messenger::wait(std::vector<simgrid::s4u::CommPtr>& comms) {
  simgrid::s4u::Comm::wait_all(comms);
  comms.clear();
}

}  // namespace tessera::sim
