#include "schedule_file.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace tessera::sim {

int RankGroup::index_of(int rank) const {
  const int offset = rank - first;
  if (stride <= 0 || offset < 0 || offset % stride != 0 || offset / stride >= count) return -1;
  return offset / stride;
}

namespace {

class LineReader {
 public:
  LineReader(const std::string& path, std::istream& in) : path_(path), in_(in) {}
  /// The next line that is not blank, split into words; false at the end.
  bool next(std::vector<std::string>& words) {
    std::string line;
    while (std::getline(in_, line)) {
      ++number_;
      words.clear();
      std::istringstream s(line);
      for (std::string w; s >> w;) words.push_back(w);
      if (!words.empty() && words[0][0] != '#') return true;
    }
    return false;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ":" + std::to_string(number_) + ": " + what);
  }
  double number(const std::string& word, const char* what) const {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || !std::isfinite(v) || v < 0) fail(std::string("expected ") + what + ", got '" + word + "'");
    return v;
  }
  int integer(const std::string& word, const char* what, int limit) const {
    const double v = number(word, what);
    if (v != std::floor(v) || v >= limit) fail(std::string("expected ") + what + " below " + std::to_string(limit) + ", got '" + word + "'");
    return static_cast<int>(v);
  }

 private:
  std::string path_;
  std::istream& in_;
  int number_ = 0;
};

const std::map<std::string, OpKind>& op_names() {
  static const std::map<std::string, OpKind> names{
      {"c", OpKind::compute},        {"x", OpKind::exchange},       {"xo", OpKind::exchange},
      {"ar", OpKind::allreduce},
      {"iar", OpKind::allreduce_start}, {"wa", OpKind::wait_all},   {"ag", OpKind::allgather},
      {"rs", OpKind::reduce_scatter}, {"a2a", OpKind::alltoall}};
  return names;
}

Op parse_op(const LineReader& r, const std::vector<std::string>& w, const Schedule& s, int rank) {
  const auto kind = op_names().find(w[0]);
  if (kind == op_names().end()) r.fail("unknown operation '" + w[0] + "'");
  if (w.size() < 2) r.fail("'" + w[0] + "' needs a layer index");
  Op op;
  op.kind = kind->second;
  op.layer = w[1] == "-1" ? -1 : r.integer(w[1], "a layer index", static_cast<int>(s.layers.size()));
  switch (op.kind) {
    case OpKind::compute:
      if (w.size() != 3) r.fail("compute: expected 'c LAYER SECONDS'");
      op.seconds = r.number(w[2], "seconds");
      break;
    case OpKind::wait_all:
      if (w.size() != 2) r.fail("expected 'wa LAYER'");
      break;
    case OpKind::exchange: {
      // x LAYER SENDS (PEER BYTES)... RECEIVES PEER...; xo LAYER SECONDS SENDS ...: computing
      // SECONDS while the messages travel.
      const bool overlapped = w[0] == "xo";
      const auto bad = [&] {
        r.fail(overlapped ? "exchange: expected 'xo LAYER SECONDS SENDS PEER BYTES ... RECEIVES PEER ...'"
                          : "exchange: expected 'x LAYER SENDS PEER BYTES ... RECEIVES PEER ...'");
      };
      const size_t first = overlapped ? 3 : 2;  // the send count's word
      if (w.size() < first + 2) bad();
      if (overlapped) op.seconds = r.number(w[2], "seconds");
      const int sends = r.integer(w[first], "a send count", 1 << 20);
      const size_t at = first + 1 + 2 * static_cast<size_t>(sends);
      if (w.size() < at + 1) bad();
      const int receives = r.integer(w[at], "a receive count", 1 << 20);
      if (w.size() != at + 1 + static_cast<size_t>(receives)) bad();
      const auto peer = [&](const std::string& word) {
        const int p = r.integer(word, "a peer rank", s.ranks);
        if (p == rank) r.fail("exchange: rank " + std::to_string(rank) + " names itself as a peer");
        return p;
      };
      for (size_t k = 0; k < static_cast<size_t>(sends); ++k)
        op.sends.emplace_back(peer(w[first + 1 + 2 * k]), r.number(w[first + 2 + 2 * k], "bytes"));
      for (size_t k = 0; k < static_cast<size_t>(receives); ++k) op.receives.push_back(peer(w[at + 1 + k]));
      break;
    }
    default: {
      if (w.size() != 6) r.fail("'" + w[0] + "': expected '" + w[0] + " LAYER FIRST STRIDE COUNT BYTES'");
      op.group.first = r.integer(w[2], "a first rank", s.ranks);
      op.group.stride = r.integer(w[3], "a stride", s.ranks + 1);
      op.group.count = r.integer(w[4], "a group size", s.ranks + 1);
      op.bytes = r.number(w[5], "bytes");
      if (op.group.stride < 1 || op.group.count < 1 || op.group.member(op.group.count - 1) >= s.ranks)
        r.fail("group (first " + w[2] + ", stride " + w[3] + ", count " + w[4] + ") reaches beyond rank " + std::to_string(s.ranks - 1));
      if (op.group.index_of(rank) < 0) r.fail("rank " + std::to_string(rank) + " is not in the group of its own '" + w[0] + "'");
    }
  }
  return op;
}

/// What one rank sends another in exchanges, the other must receive from it as often.
void check_exchanges(const std::string& path, const Schedule& s) {
  std::map<std::pair<int, int>, int64_t> sent, received;  // (from, to)
  for (int r = 0; r < s.ranks; ++r)
    for (const Op& op : s.ops[static_cast<size_t>(r)]) {
      for (const auto& m : op.sends) ++sent[{r, m.first}];
      for (const int from : op.receives) ++received[{from, r}];
    }
  const auto mismatch = [&](const std::pair<int, int>& pair, int64_t sends, int64_t receives) {
    throw std::runtime_error(path + ": rank " + std::to_string(pair.first) + " sends to rank " +
                             std::to_string(pair.second) + " " + std::to_string(sends) + " time(s) in exchanges, but rank " +
                             std::to_string(pair.second) + " receives from it " + std::to_string(receives) + " time(s)");
  };
  for (const auto& [pair, count] : sent) {
    const auto other = received.find(pair);
    if (other == received.end() || other->second != count) mismatch(pair, count, other == received.end() ? 0 : other->second);
  }
  for (const auto& [pair, count] : received)
    if (!sent.count(pair)) mismatch(pair, 0, count);
}

}  // namespace

Schedule read_schedule(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the schedule file");
  LineReader r(path, in);
  Schedule s;
  std::vector<std::string> w;
  if (!r.next(w) || w.size() != 2 || w[0] != "tessera-step-schedule")
    r.fail("not a Tessera step schedule (its first line must be 'tessera-step-schedule 1')");
  if (w[1] != "1") r.fail("schedule format " + w[1] + " is not the one this program reads (1)");
  int rank = -1;
  std::vector<bool> seen;
  while (r.next(w)) {
    if (w[0] == "ranks") {
      if (w.size() != 2 || s.ranks != 0) r.fail("expected one line 'ranks N'");
      s.ranks = r.integer(w[1], "a rank count", 1 << 24);
      if (s.ranks < 1) r.fail("a schedule needs at least one rank");
      s.ops.resize(static_cast<size_t>(s.ranks));
      seen.assign(static_cast<size_t>(s.ranks), false);
    } else if (w[0] == "ranks_per_node") {
      if (w.size() != 2) r.fail("expected 'ranks_per_node N'");
      s.ranks_per_node = r.integer(w[1], "ranks per node", 1 << 20);
      if (s.ranks_per_node < 1) r.fail("ranks_per_node must be at least 1");
    } else if (w[0] == "predicted_step_seconds") {
      if (w.size() != 2) r.fail("expected 'predicted_step_seconds S'");
      s.predicted_step = r.number(w[1], "seconds");
    } else if (w[0] == "measured_step_seconds") {
      if (w.size() != 2) r.fail("expected 'measured_step_seconds S'");
      s.measured_step = r.number(w[1], "seconds");
    } else if (w[0] == "label") {
      s.label.clear();
      for (size_t k = 1; k < w.size(); ++k) s.label += (k > 1 ? " " : "") + w[k];
    } else if (w[0] == "layer") {
      if (w.size() != 3 || r.integer(w[1], "a layer index", 1 << 20) != static_cast<int>(s.layers.size()))
        r.fail("expected 'layer " + std::to_string(s.layers.size()) + " NAME' (layers numbered in order)");
      s.layers.push_back(w[2]);
    } else if (w[0] == "rank") {
      if (s.ranks == 0) r.fail("'rank' before 'ranks N'");
      if (w.size() != 2) r.fail("expected 'rank R'");
      rank = r.integer(w[1], "a rank", s.ranks);
      if (seen[static_cast<size_t>(rank)]) r.fail("rank " + w[1] + " appears twice");
      seen[static_cast<size_t>(rank)] = true;
    } else if (w[0] == "end") {
      break;
    } else {
      if (rank < 0) r.fail("operation '" + w[0] + "' before any 'rank R' line");
      s.ops[static_cast<size_t>(rank)].push_back(parse_op(r, w, s, rank));
    }
  }
  if (w.empty() || w[0] != "end") r.fail("the schedule ends without its 'end' line (cut short?)");
  for (int k = 0; k < s.ranks; ++k)
    if (!seen[static_cast<size_t>(k)]) throw std::runtime_error(path + ": rank " + std::to_string(k) + " has no operations ('rank " + std::to_string(k) + "' missing)");
  check_exchanges(path, s);
  return s;
}

}  // namespace tessera::sim
