#include "platform.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace tessera::sim {
namespace {

namespace sg4 = simgrid::s4u;
using nlohmann::json;

class PlatformFile {
 public:
  explicit PlatformFile(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(path_ + ": " + key + ": " + what);
  }
  const json& member(const json& object, const std::string& key, const std::string& where) const {
    if (!object.contains(key)) fail(where + key, "missing");
    return object.at(key);
  }
  double positive(const json& object, const std::string& key, const std::string& where, bool zero_ok = false) const {
    const json& v = member(object, key, where);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (!zero_ok && v.get<double>() == 0))
      fail(where + key, zero_ok ? "expected a number of at least 0" : "expected a positive number");
    return v.get<double>();
  }
  unsigned count(const json& v, const std::string& key) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 24))
      fail(key, "expected a whole number from 1 to 16777216");
    return static_cast<unsigned>(v.get<int64_t>());
  }
  std::vector<unsigned> counts(const json& object, const std::string& key, const std::string& where, size_t size) const {
    const json& v = member(object, key, where);
    if (!v.is_array() || (size > 0 && v.size() != size))
      fail(where + key, size > 0 ? "expected a list of " + std::to_string(size) + " whole numbers" : "expected a list of whole numbers");
    std::vector<unsigned> out;
    for (size_t k = 0; k < v.size(); ++k) out.push_back(count(v[k], where + key + "[" + std::to_string(k) + "]"));
    return out;
  }
  void only(const json& object, const std::set<std::string>& keys, const std::string& where) const {
    if (!object.is_object()) fail(where.empty() ? "(top level)" : where, "expected an object");
    for (const auto& item : object.items())
      if (!keys.count(item.key())) fail(where + item.key(), "unknown key");
  }

 private:
  std::string path_;
};

struct LinkFigures {
  double bandwidth = 0, latency = 0;
};

LinkFigures link_figures(const PlatformFile& f, const json& root, const std::string& key) {
  const json& l = f.member(root, key, "");
  f.only(l, {"bandwidth", "latency"}, key + ".");
  return {f.positive(l, "bandwidth", key + "."), f.positive(l, "latency", key + ".", true)};
}

/// The cluster callbacks that create the endpoints (hosts, recorded in `p.endpoints` by id)
/// and the within-node link of each. Used while the zone is created, with `p` alive.
sg4::ClusterCallbacks endpoint_callbacks(Platform& p, LinkFigures within) {
  const std::function<sg4::ClusterCallbacks::ClusterNetPointCb> netpoint =
      [&p](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
        auto* host = zone->create_host("endpoint-" + std::to_string(id), 1e9)->set_core_count(p.ranks_per_node)->seal();
        if (p.endpoints.size() <= id) p.endpoints.resize(id + 1, nullptr);
        p.endpoints[id] = host;
        return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
      };
  // Two ranks of one node: each message its own path at the node's rate (FATPIPE), as the
  // machine profiles' within-node alpha-beta figures assume.
  const std::function<sg4::ClusterCallbacks::ClusterLinkCb> loopback =
      [within](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
        return zone->create_link("loopback-" + std::to_string(id), within.bandwidth)
            ->set_latency(within.latency)
            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
            ->seal();
      };
  // No limiter links: in SimGrid 3.32 a limiter given to each endpoint of a fat tree bounded
  // all endpoints' traffic together (eight flows between eight nodes got one limiter's rate in
  // all), so an endpoint's injection is its link into the topology.
  return sg4::ClusterCallbacks(netpoint, loopback, {});
}

/// The file's "topology" as a SimGrid cluster zone whose every link is `link`, full duplex.
sg4::NetZone* create_topology(const PlatformFile& f, const json& topology, const std::string& name,
                              const sg4::ClusterCallbacks& callbacks, LinkFigures link) {
  if (!topology.is_object() || !topology.contains("kind") || !topology["kind"].is_string())
    f.fail("topology.kind", "expected \"fat_tree\", \"dragonfly\" or \"torus\"");
  const std::string kind = topology["kind"];
  const auto duplex = sg4::Link::SharingPolicy::SPLITDUPLEX;
  if (kind == "fat_tree") {
    f.only(topology, {"kind", "levels", "down", "up", "links"}, "topology.");
    const unsigned levels = f.count(f.member(topology, "levels", "topology."), "topology.levels");
    const sg4::FatTreeParams params(levels, f.counts(topology, "down", "topology.", levels),
                                    f.counts(topology, "up", "topology.", levels),
                                    f.counts(topology, "links", "topology.", levels));
    return sg4::create_fatTree_zone(name, nullptr, params, callbacks, link.bandwidth, link.latency, duplex);
  }
  if (kind == "dragonfly") {
    f.only(topology, {"kind", "groups", "chassis", "routers", "nodes_per_router"}, "topology.");
    const auto groups = f.counts(topology, "groups", "topology.", 2), chassis = f.counts(topology, "chassis", "topology.", 2),
               routers = f.counts(topology, "routers", "topology.", 2);
    const unsigned per_router = f.count(f.member(topology, "nodes_per_router", "topology."), "topology.nodes_per_router");
    const sg4::DragonflyParams params({groups[0], groups[1]}, {chassis[0], chassis[1]}, {routers[0], routers[1]}, per_router);
    return sg4::create_dragonfly_zone(name, nullptr, params, callbacks, link.bandwidth, link.latency, duplex);
  }
  if (kind == "torus") {
    f.only(topology, {"kind", "dimensions"}, "topology.");
    const auto dims = f.counts(topology, "dimensions", "topology.", 0);
    if (dims.empty()) f.fail("topology.dimensions", "expected at least one dimension");
    const std::vector<unsigned long> dimensions(dims.begin(), dims.end());
    return sg4::create_torus_zone(name, nullptr, dimensions, callbacks, link.bandwidth, link.latency, duplex);
  }
  f.fail("topology.kind", "unknown topology \"" + kind + "\" (fat_tree, dragonfly or torus)");
}

}  // namespace

Platform build_platform(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the platform file");
  const PlatformFile f(path);
  json root;
  try {
    root = json::parse(in, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  f.only(root, {"format_version", "name", "description", "sources", "ranks_per_node", "endpoints_per_node", "topology",
                "link", "software_latency", "within_node"},
         "");
  if (f.member(root, "format_version", "") != 1) f.fail("format_version", "expected 1");
  Platform p;
  p.name = f.member(root, "name", "").get<std::string>();
  if (root.contains("description")) p.description = root["description"].get<std::string>();
  p.ranks_per_node = static_cast<int>(f.count(f.member(root, "ranks_per_node", ""), "ranks_per_node"));
  if (root.contains("endpoints_per_node"))
    p.endpoints_per_node = static_cast<int>(f.count(root["endpoints_per_node"], "endpoints_per_node"));
  if (p.endpoints_per_node > p.ranks_per_node || p.ranks_per_node % p.endpoints_per_node != 0)
    f.fail("endpoints_per_node", "must divide ranks_per_node (" + std::to_string(p.ranks_per_node) + ")");
  const LinkFigures link = link_figures(f, root, "link");
  const LinkFigures within = link_figures(f, root, "within_node");
  p.software_latency = f.positive(root, "software_latency", "", true);

  sg4::NetZone* zone = create_topology(f, f.member(root, "topology", ""), p.name, endpoint_callbacks(p, within), link);
  zone->seal();
  const auto& nodes = p.endpoints;
  if (nodes.size() % static_cast<size_t>(p.endpoints_per_node) != 0)
    f.fail("topology", std::to_string(nodes.size()) + " endpoints do not make whole nodes of " +
                           std::to_string(p.endpoints_per_node));
  for (size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k] == nullptr) throw std::runtime_error(path + ": internal: node " + std::to_string(k) + " was not created");
  return p;
}

}  // namespace tessera::sim
