// sim/fat_tree_zone.cpp: the two-level fat tree of
// <cluster topology="FAT_TREE" topo_parameters="2;LEAF,LEAVES;1,UP;1,1">
// (sim/platforms/fat_tree.c), built in SimGrid directly, without its
// FatTreeZone.
//
// Why: SimGrid 3.32's FatTreeZone connects each node to its parents by
// testing every node of the level above (FatTreeZone::
// connect_node_to_parents), and each test builds a std::stringstream
// whether or not it logs (are_related): hosts x leaves of them, 268
// million at 65,536 hosts, 63 s of loading before the first event (issue
// 27). This zone makes the same hosts, the same links under the same
// names, in the same order, and routes them as FatTreeZone::
// get_local_route does (d-mod-k: up to the spine DST mod UP, down to the
// destination), in time linear in the platform. tests/test_sim.c
// compares every route of small trees, both ways, with SimGrid's own
// zone.
//
// One difference, on purpose: [platform] host_stack is a host's limit, so
// only hosts get a limiter link here. SimGrid's <cluster limiter_link>
// gives every switch one as well, at the same rate and in every route
// through it (FatTreeZone::generate_switches), which throttles a whole
// leaf to one host's stack: a 32-worker ring took 9x as long with it, not
// 2x. Such a fat tree has no platform file (fat_tree.c refuses to write
// one); without host_stack the platform file (`gradsim platform`, SMPI's
// parity runs) is SimGrid's <cluster> and the same platform.
#include "fat_tree_zone.h"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <string>
#include <vector>

namespace {

using simgrid::kernel::resource::StandardLinkImpl;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::NetZoneImpl;
using simgrid::kernel::routing::Route;

class FatTree2 : public NetZoneImpl {
public:
  FatTree2(const std::string &name, const sim_fat_tree &t)
      : NetZoneImpl(name), t_(t) {}

  void build();
  void get_local_route(const NetPoint *src, const NetPoint *dst,
                       Route *into, double *latency) override;

private:
  sim_fat_tree t_;
  std::vector<long> host_of_; // netpoint id -> host index, or -1
  // Per host: its limiter (nullptr without host_stack).
  std::vector<StandardLinkImpl *> host_lim_;
  // Host i's link to its leaf, and leaf j's link to spine s (j * up + s).
  std::vector<StandardLinkImpl *> host_up_, host_down_, leaf_up_, leaf_down_;

  StandardLinkImpl *limiter(unsigned long id);
  StandardLinkImpl *cable(const std::string &name);
  void link(long child, long parent, long uid, StandardLinkImpl **up,
            StandardLinkImpl **down);
  void hop(Route *into, double *latency, StandardLinkImpl *l) const {
    into->link_list_.push_back(l);
    if (latency)
      *latency += t_.latency_s;
  }
  void limit(Route *into, StandardLinkImpl *l) const {
    if (l)
      into->link_list_.push_back(l);
  }
};

// As sg_platf_cluster_create_limiter: "<cluster>_link_<ID>_limiter".
StandardLinkImpl *FatTree2::limiter(unsigned long id) {
  if (t_.limiter_Bps <= 0)
    return nullptr;
  std::string name =
      std::string(t_.cluster) + "_link_" + std::to_string(id) + "_limiter";
  return get_iface()->create_link(name, t_.limiter_Bps)->seal()->get_impl();
}

// One direction of a link: the cluster's bandwidth and latency.
StandardLinkImpl *FatTree2::cable(const std::string &name) {
  return get_iface()
      ->create_link(name, t_.bandwidth_Bps)
      ->set_latency(t_.latency_s)
      ->seal()
      ->get_impl();
}

// As FatTreeZone::add_link on a split-duplex cluster.
void FatTree2::link(long child, long parent, long uid, StandardLinkImpl **up,
                    StandardLinkImpl **down) {
  std::string id = "link_from_" + std::to_string(child) + "_" +
                   std::to_string(parent) + "_" + std::to_string(uid);
  *up = cable(id + "_UP");
  *down = cable(id + "_DOWN");
}

// In FatTreeZone's order: each host then its limiter; each host's link
// to its leaf; each leaf's links to the spines (switch ids count down
// from 2 x hosts, leaves then spines).
void FatTree2::build() {
  const long n = (long)t_.leaf * t_.leaves, leaves = t_.leaves, up = t_.up;
  host_lim_.assign(n, nullptr);
  for (long i = 0; i < n; i++) {
    simgrid::s4u::Host *h =
        get_iface()->create_host(t_.prefix + std::to_string(i), t_.speed_flops);
    h->set_core_count(1)->seal();
    unsigned long id = h->get_netpoint()->id();
    if (host_of_.size() <= id)
      host_of_.resize(id + 1, -1);
    host_of_[id] = i;
    host_lim_[i] = limiter((unsigned long)i);
  }
  host_up_.resize(n);
  host_down_.resize(n);
  for (long i = 0; i < n; i++)
    link(i, 2 * n - 1 - i / t_.leaf, i, &host_up_[i], &host_down_[i]);
  leaf_up_.resize(leaves * up);
  leaf_down_.resize(leaves * up);
  for (long j = 0; j < leaves; j++)
    for (long s = 0; s < up; s++)
      link(2 * n - 1 - j, 2 * n - 1 - leaves - s, n + j * up + s,
           &leaf_up_[j * up + s], &leaf_down_[j * up + s]);
}

// FatTreeZone::get_local_route for two levels and one port per link:
// up while the destination is not below (host, then leaf to spine
// DST mod UP), down to the destination; the source's limiter first, the
// destination's last. A host to itself goes to its leaf and back, as
// there.
void FatTree2::get_local_route(const NetPoint *src, const NetPoint *dst,
                               Route *into, double *latency) {
  if (src->is_router() || dst->is_router())
    return;
  long a = host_of_.at(src->id()), b = host_of_.at(dst->id());
  long la = a / t_.leaf, lb = b / t_.leaf;
  limit(into, host_lim_[a]);
  hop(into, latency, host_up_[a]);
  if (la != lb) {
    long s = b % t_.up;
    hop(into, latency, leaf_up_[la * t_.up + s]);
    hop(into, latency, leaf_down_[lb * t_.up + s]);
  }
  hop(into, latency, host_down_[b]);
  limit(into, host_lim_[b]);
}

} // namespace

void sim_fat_tree_build(const sim_fat_tree *t) {
  auto *zone = new FatTree2(t->cluster, *t);
  zone->build();
  simgrid::s4u::Engine::on_platform_created();
}
