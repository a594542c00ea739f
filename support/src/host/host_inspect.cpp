// host-inspect probes (host_inspect.h). Identity matching is strict on purpose: an all-zero
// MAC or GUID (what `ip link` shows for a VF nobody configured) never matches, and a match
// says which identity and which table it came from, so the host team can check it.

#include "ibc/support/host_inspect.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>

#include "ibc/core/kernel_log.h"
#include "ibc/core/pf_judge.h"
#include "ibc/core/text.h"

namespace ibc::agent {

namespace {

using core::startsWith;
using core::trim;

std::string basename(std::string_view p) {
  const auto slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

std::string hexDigits(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (c != ':' && c != '-' && c != '.') {
      return {};
    }
  }
  return out;
}

bool allZero(std::string_view hex) {
  return std::all_of(hex.begin(), hex.end(), [](char c) { return c == '0'; });
}

std::string readValue(const Filesystem& fs, const std::string& path) {
  auto r = fs.readFile(path, 4096);
  if (!r.ok()) return {};
  return std::string(trim(*r));
}

}  // namespace

std::string normalizeGuid(std::string_view text) {
  text = trim(text);
  if (startsWith(text, "0x") || startsWith(text, "0X")) text.remove_prefix(2);
  const std::string hex = hexDigits(text);
  return hex.size() == 16 ? hex : std::string();
}

std::string normalizeMac(std::string_view text) {
  text = trim(text);
  const auto parts = core::split(text, text.find('-') != std::string_view::npos ? '-' : ':');
  if (parts.size() != 6) return {};
  std::string out;
  for (auto p : parts) {
    if (p.size() != 2 || hexDigits(p).size() != 2) return {};
    out += (out.empty() ? "" : ":") + hexDigits(p);
  }
  return out;
}

std::string normalizePci(std::string_view text) {
  text = trim(text);
  std::string s(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // [domain:]bus:device.function
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot + 2 != s.size()) return {};
  const auto colons = std::count(s.begin(), s.end(), ':');
  if (colons == 1) s = "0000:" + s;
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return {};
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return {};
  }
  if (s[11] < '0' || s[11] > '7') return {};
  return s;
}

Result<VfQuery> parseVfArgument(std::string_view text) {
  VfQuery q;
  q.device = core::printable(trim(text), 128);
  if (auto pci = normalizePci(text); !pci.empty()) {
    q.pci = pci;
  } else if (auto mac = normalizeMac(text); !mac.empty()) {
    q.mac = mac;
  } else if (auto guid = normalizeGuid(text); !guid.empty()) {
    q.guid = guid;
  } else {
    return Error{ErrorCode::InvalidArgument,
                 "--vf " + q.device +
                     ": not a GUID (0x248a070300a1b2c3, 248a:0703:00a1:b2c3), a MAC "
                     "(b8:59:9f:c1:ec:12) or a PCI address (0000:42:00.2)"};
  }
  return q;
}

SriovInventory readSriovInventory(const Filesystem& fs) {
  SriovInventory inv;
  const std::string base = "/sys/bus/pci/devices";
  auto entries = fs.listDir(base);
  if (!entries.ok()) {
    inv.notes.push_back(base + ": " + entries.error().message);
    return inv;
  }
  for (const auto& e : *entries) {
    const std::string dir = base + "/" + e;
    auto numvfs = fs.readFile(dir + "/sriov_numvfs", 64);
    if (!numvfs.ok()) continue;  // not an SR-IOV PF
    SriovPf pf;
    pf.pci = normalizePci(e).empty() ? core::printable(e, 64) : normalizePci(e);
    pf.dir = dir;
    if (auto n = core::parseInt(trim(*numvfs)); n && *n >= 0 && *n < 65536)
      pf.numvfs = static_cast<uint32_t>(*n);
    if (auto n = core::parseInt(readValue(fs, dir + "/sriov_totalvfs")); n && *n >= 0 && *n < 65536)
      pf.totalvfs = static_cast<uint32_t>(*n);
    if (auto l = fs.listDir(dir + "/infiniband"); l.ok()) pf.rdma_devices = *l;
    if (auto l = fs.listDir(dir + "/net"); l.ok()) pf.netdevs = *l;
    std::map<int32_t, SriovVf> vfs;
    if (auto l = fs.listDir(dir); l.ok()) {
      for (const auto& name : *l) {
        if (!startsWith(name, "virtfn")) continue;
        const auto idx = core::parseInt(std::string_view(name).substr(6));
        if (!idx || *idx < 0 || *idx > 65535) continue;
        auto target = fs.readLink(dir + "/" + name);
        if (!target.ok()) continue;
        auto& vf = vfs[static_cast<int32_t>(*idx)];
        vf.index = static_cast<int32_t>(*idx);
        vf.pci = normalizePci(basename(*target));
      }
    }
    if (auto l = fs.listDir(dir + "/sriov"); l.ok()) {
      for (const auto& name : *l) {
        const auto idx = core::parseInt(name);
        if (!idx || *idx < 0 || *idx > 65535 || vfs.size() > 4096) continue;
        auto& vf = vfs[static_cast<int32_t>(*idx)];
        vf.index = static_cast<int32_t>(*idx);
        const std::string vdir = dir + "/sriov/" + name;
        if (auto g = normalizeGuid(readValue(fs, vdir + "/node")); !g.empty() && !allZero(g))
          vf.node_guid = g;
        if (auto g = normalizeGuid(readValue(fs, vdir + "/port")); !g.empty() && !allZero(g))
          vf.port_guid = g;
        if (auto m = normalizeMac(readValue(fs, vdir + "/mac"));
            !m.empty() && !allZero(hexDigits(m)))
          vf.mac = m;
        vf.policy = core::printable(readValue(fs, vdir + "/policy"), 32);
      }
    }
    for (auto& [i, vf] : vfs) pf.vfs.push_back(std::move(vf));
    inv.pfs.push_back(std::move(pf));
  }
  return inv;
}

namespace {

struct Candidate {
  const SriovPf* pf = nullptr;
  std::string pf_netdev;
  int32_t index = -1;
  std::string vf_pci;
  std::string matched_by;
};

const SriovPf* pfOfNetdev(const SriovInventory& inv, const std::string& netdev) {
  for (const auto& pf : inv.pfs) {
    if (std::find(pf.netdevs.begin(), pf.netdevs.end(), netdev) != pf.netdevs.end()) return &pf;
  }
  return nullptr;
}

std::vector<std::string> identitiesOf(const VfQuery& q) {
  std::vector<std::string> ids;
  // From a bundle the address is the guest's, which a hypervisor usually remaps; from --vf it
  // is the host's own.
  if (!q.pci.empty()) ids.push_back((q.node.empty() ? "pci " : "guest pci ") + q.pci);
  if (!q.node_guid.empty()) ids.push_back("node_guid " + q.node_guid);
  if (!q.port_guid.empty()) ids.push_back("port_guid " + q.port_guid);
  if (!q.guid.empty()) ids.push_back("guid " + q.guid);
  if (!q.mac.empty()) ids.push_back("mac " + q.mac);
  return ids;
}

// What a query maps to (the candidate that won, or nullptr), with what was compared when
// nothing matched.
v1::VfMapping mappingOf(const VfQuery& q, const Candidate* hit, const SriovInventory& inv,
                        const std::vector<v1::PfNetdevLink>& links) {
  std::size_t sysfs_vfs = 0, sysfs_guids = 0, sysfs_macs = 0, link_vfs = 0;
  for (const auto& pf : inv.pfs) {
    for (const auto& vf : pf.vfs) {
      sysfs_vfs += vf.pci.empty() ? 0 : 1;
      sysfs_guids += (vf.node_guid.empty() ? 0 : 1) + (vf.port_guid.empty() ? 0 : 1);
      sysfs_macs += vf.mac.empty() ? 0 : 1;
    }
  }
  for (const auto& l : links) link_vfs += static_cast<std::size_t>(l.vfs_size());
  v1::VfMapping m;
  m.set_node(q.node);
  m.set_device(q.device);
  for (auto& id : identitiesOf(q)) m.add_identities(std::move(id));
  if (hit) {
    m.set_vf_index(hit->index);
    m.set_vf_pci(hit->vf_pci);
    m.set_matched_by(hit->matched_by);
    if (hit->pf) {
      m.set_pf_pci(hit->pf->pci);
      m.set_pf_device(!hit->pf->rdma_devices.empty() ? hit->pf->rdma_devices.front()
                      : !hit->pf->netdevs.empty()    ? hit->pf->netdevs.front()
                                                     : hit->pf->pci);
      m.set_pf_netdev(!hit->pf_netdev.empty()     ? hit->pf_netdev
                      : !hit->pf->netdevs.empty() ? hit->pf->netdevs.front()
                                                  : std::string());
    } else {
      // Known only from a pasted `ip link` table: the netdev is all we know of the PF.
      m.set_pf_device(hit->pf_netdev);
      m.set_pf_netdev(hit->pf_netdev);
    }
  } else {
    m.set_vf_index(-1);
    m.add_compared(inv.pfs.empty()
                       ? std::string("no SR-IOV PF on this host at all (no sriov_numvfs in sysfs)")
                       : std::to_string(inv.pfs.size()) + " SR-IOV PF(s) in sysfs (sriov_numvfs)");
    m.add_compared(std::to_string(sysfs_vfs) + " VF PCI address(es) (virtfnN links)");
    m.add_compared(std::to_string(sysfs_guids) + " VF GUID(s) (sriov/N/node, sriov/N/port)");
    m.add_compared(std::to_string(sysfs_macs) + " VF MAC(s) (sriov/N/mac)");
    m.add_compared(std::to_string(link_vfs) + " VF record(s) of " + std::to_string(links.size()) +
                   " PF netdev(s) in ip link output");
    for (const auto& pf : inv.pfs) {
      if (!q.pci.empty() && pf.pci == q.pci) m.add_compared(q.pci + " is a PF itself, not a VF");
    }
    for (const auto& n : inv.notes) m.add_compared(n);
  }
  return m;
}

}  // namespace

std::vector<v1::VfMapping> mapVfs(const std::vector<VfQuery>& queries, const SriovInventory& inv,
                                  const std::vector<v1::PfNetdevLink>& links) {
  std::vector<v1::VfMapping> out;
  for (const auto& q : queries) {
    // Every identity that matches; the strongest wins: GUIDs (unique by construction), then
    // a MAC, then a PCI address (a guest's address may collide with a host's).
    std::optional<Candidate> hit;
    int hit_rank = 99;
    auto take = [&](Candidate c) {
      const std::string& by = c.matched_by;
      const int rank = startsWith(by, "node_guid")   ? 0
                       : startsWith(by, "port_guid") ? 1
                       : startsWith(by, "mac")       ? 2
                                                     : 3;
      if (rank < hit_rank) {
        hit = std::move(c);
        hit_rank = rank;
      }
    };
    for (const auto& pf : inv.pfs) {
      for (const auto& vf : pf.vfs) {
        const std::string where = "sriov/" + std::to_string(vf.index);
        if (!q.pci.empty() && vf.pci == q.pci)
          take({&pf, "", vf.index, vf.pci, "pci (virtfn" + std::to_string(vf.index) + ")"});
        const std::string ng = !q.node_guid.empty() ? q.node_guid : q.guid;
        const std::string pg = !q.port_guid.empty() ? q.port_guid : q.guid;
        if (!ng.empty() && vf.node_guid == ng)
          take({&pf, "", vf.index, vf.pci, "node_guid (" + where + "/node)"});
        if (!pg.empty() && vf.port_guid == pg)
          take({&pf, "", vf.index, vf.pci, "port_guid (" + where + "/port)"});
        if (!q.mac.empty() && vf.mac == q.mac)
          take({&pf, "", vf.index, vf.pci, "mac (" + where + "/mac)"});
      }
    }
    for (const auto& l : links) {
      for (const auto& vf : l.vfs()) {
        const std::string where = "ip link " + l.name() + " vf " + std::to_string(vf.index());
        const SriovPf* pf = pfOfNetdev(inv, l.name());
        auto cand = [&](std::string by) {
          Candidate c{pf, l.name(), static_cast<int32_t>(vf.index()), "", std::move(by)};
          if (pf) {
            for (const auto& s : pf->vfs) {
              if (s.index == c.index) c.vf_pci = s.pci;
            }
          }
          return c;
        };
        const std::string ng = normalizeGuid(vf.node_guid());
        const std::string pg = normalizeGuid(vf.port_guid());
        const std::string mac = normalizeMac(vf.mac());
        const std::string qng = !q.node_guid.empty() ? q.node_guid : q.guid;
        const std::string qpg = !q.port_guid.empty() ? q.port_guid : q.guid;
        if (!ng.empty() && !allZero(ng) && ng == qng) take(cand("node_guid (" + where + ")"));
        if (!pg.empty() && !allZero(pg) && pg == qpg) take(cand("port_guid (" + where + ")"));
        if (!mac.empty() && !allZero(hexDigits(mac)) && mac == q.mac)
          take(cand("mac (" + where + ")"));
      }
    }
    out.push_back(mappingOf(q, hit ? &*hit : nullptr, inv, links));
  }
  return out;
}

namespace {

std::string hostNameOf(const HostInspectOptions& o, const HostSeams& seams) {
  if (o.root == "/" && seams.process_facts) {
    const auto facts = seams.process_facts();
    if (!facts.hostname.empty()) return facts.hostname;
  }
  for (const char* p : {"/etc/hostname", "/proc/sys/kernel/hostname"}) {
    const std::string v = readValue(seams.host, p);
    if (!v.empty()) return core::printable(v, 128);
  }
  return o.root == "/"
             ? "localhost"
             : basename(o.root.back() == '/' ? o.root.substr(0, o.root.size() - 1) : o.root);
}

// Does a tool's -d argument name this PF? ("0000:42:00.0", "42:00.0", "mlx5_0")
bool deviceNamesPf(const std::string& device, const v1::PfEvidence& pf) {
  if (device.empty()) return false;
  if (normalizePci(device) == pf.pf_pci()) return true;
  return device == pf.pf_device() || device == pf.rdma().name();
}

bool netdevOfPf(const std::string& netdev, const v1::PfEvidence& pf) {
  return std::find(pf.pf_netdevs().begin(), pf.pf_netdevs().end(), netdev) != pf.pf_netdevs().end();
}

// The PF a piece of pasted evidence belongs to: named by it, else the only PF; nullptr when
// that cannot be told.
template <typename Named>
v1::PfEvidence* attribute(std::vector<v1::PfEvidence*>& pfs, Named&& names) {
  for (auto* pf : pfs) {
    if (names(*pf)) return pf;
  }
  return pfs.size() == 1 ? pfs.front() : nullptr;
}

void runTool(const HostSeams& seams, const CollectLimits& limits,
             const std::vector<std::string>& argv, v1::PfEvidence& pf, std::string* out_text) {
  if (!seams.runner.available(argv[0])) {
    pf.add_notes(argv[0] + " not installed: paste its output with --paste");
    return;
  }
  auto r = seams.runner.run(argv, limits.command_timeout * 6, 4u << 20);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!r.ok()) {
    pf.add_notes(cmd + ": " + r.error().message);
    return;
  }
  if (r->exit_code != 0 && r->out.empty()) {
    pf.add_notes(cmd + ": exit " + std::to_string(r->exit_code) + ": " +
                 core::printable(trim(r->err), 200));
    return;
  }
  pf.add_sources(cmd + " (run)");
  *out_text = std::move(r->out);
}

// Whether PCI address `pci` is PF `pf`'s own or one of its VFs'.
bool pciOfPf(const std::string& pci, const v1::PfEvidence& pf,
             const std::map<std::string, std::set<std::string>>& vf_pcis) {
  if (pci.empty()) return false;
  const auto it = vf_pcis.find(pf.pf_pci());
  return pci == pf.pf_pci() || (it != vf_pcis.end() && it->second.count(pci) > 0);
}

// lspci functions by PCI address: the PF's own or one of its VFs'; Lnk/AER lines shown
// without their function's address go to the only PF. Returns how many could not be tied to
// one PF.
std::size_t addLspciFunctions(const core::PfToolEvidence& ev, std::vector<v1::PfEvidence*>& pfs,
                              const std::map<std::string, std::set<std::string>>& vf_pcis,
                              const std::string& source, std::vector<std::string>& notices) {
  std::size_t unattributed = 0;
  std::size_t other = 0;
  for (const auto& f : ev.pci_functions) {
    const std::string pci = normalizePci(f.address());
    v1::PfEvidence* owner = nullptr;
    for (auto* pf : pfs) {
      if (pciOfPf(pci, *pf, vf_pcis)) owner = pf;
    }
    if (!owner && f.address().empty() && pfs.size() == 1) owner = pfs.front();
    if (owner) {
      *owner->add_pci_functions() = f;
    } else if (f.address().empty()) {
      ++unattributed;
    } else {
      ++other;
    }
  }
  if (other > 0) {
    notices.push_back(source + ": " + std::to_string(other) +
                      " lspci function(s) of other devices than the PFs of these VFs and their "
                      "VFs were left out");
  }
  return unattributed;
}

// Kernel log lines by the device they are about (PCI address, netdev, RDMA device); lines
// about no device go to the only PF.
void addKernelLines(const core::PfToolEvidence& ev, std::vector<v1::PfEvidence*>& pfs,
                    const std::map<std::string, std::set<std::string>>& vf_pcis,
                    const std::string& source, std::vector<std::string>& notices) {
  std::size_t other = 0;
  for (const auto& line : ev.kernel_log) {
    const auto subject = core::kernelMessageSubjectOf(line.text());
    v1::PfEvidence* owner = nullptr;
    for (auto* pf : pfs) {
      const bool mine = pciOfPf(subject.pci_address, *pf, vf_pcis) ||
                        (!subject.netdev.empty() && netdevOfPf(subject.netdev, *pf)) ||
                        (!subject.rdma_device.empty() && subject.rdma_device == pf->rdma().name());
      if (mine) owner = pf;
    }
    const bool no_subject =
        subject.pci_address.empty() && subject.netdev.empty() && subject.rdma_device.empty();
    if (!owner && no_subject && pfs.size() == 1) owner = pfs.front();
    if (owner) {
      *owner->add_kernel_log() = line;
    } else {
      ++other;
    }
  }
  if (!ev.kernel_log.empty()) {
    for (auto* pf : pfs) pf->add_sources(source);
  }
  if (other > 0) {
    notices.push_back(source + ": " + std::to_string(other) +
                      " kernel log line(s) about other devices than the PFs of these VFs were "
                      "left out");
  }
}

void addEvidence(const core::PfToolEvidence& ev, std::vector<v1::PfEvidence*>& pfs,
                 const std::map<std::string, std::set<std::string>>& vf_pcis,
                 const std::string& source, std::vector<std::string>& notices) {
  std::size_t unattributed = 0;
  for (const auto& ml : ev.mlxlink) {
    auto* pf =
        attribute(pfs, [&](const v1::PfEvidence& p) { return deviceNamesPf(ml.device(), p); });
    if (pf)
      *pf->add_mlxlink() = ml;
    else
      ++unattributed;
    if (pf) pf->add_sources(source);
  }
  for (const auto& mc : ev.mlxconfig) {
    auto* pf =
        attribute(pfs, [&](const v1::PfEvidence& p) { return deviceNamesPf(mc.device(), p); });
    if (pf)
      *pf->add_mlxconfig() = mc;
    else
      ++unattributed;
  }
  for (const auto& fq : ev.flint) {
    auto* pf =
        attribute(pfs, [&](const v1::PfEvidence& p) { return deviceNamesPf(fq.device(), p); });
    if (pf)
      *pf->add_flint() = fq;
    else
      ++unattributed;
  }
  for (const auto& m : ev.modules) {
    auto* pf = attribute(pfs, [&](const v1::PfEvidence& p) { return netdevOfPf(m.netdev(), p); });
    if (pf)
      *pf->add_modules() = m;
    else
      ++unattributed;
  }
  for (const auto& l : ev.links) {
    // A PF's own table; other netdevs of a whole `ip link` listing are not this PF's.
    for (auto* pf : pfs) {
      if (netdevOfPf(l.name(), *pf) ||
          (pfs.size() == 1 && pf->pf_netdevs().empty() && (pf->pf_device() == l.name())))
        *pf->add_links() = l;
    }
  }
  if (!ev.aer.empty()) {
    if (pfs.size() == 1) {
      for (const auto& a : ev.aer) *pfs.front()->add_aer() = a;
    } else {
      ++unattributed;
    }
  }
  unattributed += addLspciFunctions(ev, pfs, vf_pcis, source, notices);
  addKernelLines(ev, pfs, vf_pcis, source, notices);
  if (unattributed > 0) {
    notices.push_back(source + ": " + std::to_string(unattributed) +
                      " tool report(s) could not be tied to one PF (" + std::to_string(pfs.size()) +
                      " PFs found; the output does not name the PF's PCI address, RDMA device "
                      "or netdev): not judged");
  }
}

// One PfEvidence per PF that hosts a VF of the case (its netdevs and SR-IOV numbers from the
// inventory); `vfs_of` gets each PF's VFs, `vf_pcis` every VF PCI address of each PF.
std::vector<v1::PfEvidence> pfsOfVfs(const std::vector<v1::VfMapping>& mapping,
                                     const SriovInventory& inv,
                                     std::map<std::string, std::vector<v1::VfMapping>>& vfs_of,
                                     std::map<std::string, std::set<std::string>>& vf_pcis) {
  std::vector<v1::PfEvidence> pfs;
  for (const auto& m : mapping) {
    if (m.vf_index() < 0) continue;
    vfs_of[m.pf_device()].push_back(m);
    if (std::any_of(pfs.begin(), pfs.end(),
                    [&](const v1::PfEvidence& e) { return e.pf_device() == m.pf_device(); }))
      continue;
    v1::PfEvidence e;
    e.set_pf_pci(m.pf_pci());
    e.set_pf_device(m.pf_device());
    for (const auto& pf : inv.pfs) {
      if (pf.pci != m.pf_pci()) continue;
      for (const auto& n : pf.netdevs) e.add_pf_netdevs(n);
      e.set_sriov_numvfs(pf.numvfs);
      e.set_sriov_totalvfs(pf.totalvfs);
      for (const auto& vf : pf.vfs) {
        if (!vf.pci.empty()) vf_pcis[pf.pci].insert(vf.pci);
      }
    }
    if (e.pf_netdevs_size() == 0 && !m.pf_netdev().empty()) e.add_pf_netdevs(m.pf_netdev());
    pfs.push_back(std::move(e));
  }
  return pfs;
}

// sysfs: each PF's RDMA device (ports, counters, PCI link), netdevs and AER counters.
void readPfSysfs(const HostSeams& seams, const CollectLimits& limits,
                 std::vector<v1::PfEvidence>& pfs) {
  v1::Snapshot snap;
  SysfsLayout layout;
  collectRdmaDevices(seams.host, limits, snap, layout);
  collectNetdevs(seams.host, limits, snap, layout);
  for (auto& e : pfs) {
    for (const auto& d : snap.devices()) {
      if ((!e.pf_pci().empty() && d.pci().address() == e.pf_pci()) || d.name() == e.pf_device()) {
        *e.mutable_rdma() = d;
        e.add_sources("sysfs " + d.name());
        break;
      }
    }
    for (const auto& n : snap.netdevs()) {
      if (netdevOfPf(n.name(), e)) *e.add_netdevs() = n;
    }
    if (!e.pf_pci().empty()) {
      const std::string dir = "/sys/bus/pci/devices/" + e.pf_pci();
      for (const char* kind : {"correctable", "fatal", "nonfatal"}) {
        const std::string path = dir + "/aer_dev_" + kind;
        auto r = seams.host.readFile(path, 16 * 1024);
        if (!r.ok()) {
          if (r.error().code != ErrorCode::NotFound) e.add_notes(path + ": " + r.error().message);
          continue;
        }
        for (auto& a : core::parseAerCounters(*r, kind)) *e.add_aer() = std::move(a);
      }
      if (e.aer_size() == 0) e.add_notes("no AER counters (aer_dev_*) under " + dir);
    }
  }
}

// On the live host: mlxlink, mlxconfig, flint and ethtool -m per PF (their output names no
// device: it is that PF's), then dmesg for every PF.
void runPfTools(const HostSeams& seams, const CollectLimits& limits,
                std::vector<v1::PfEvidence>& pfs,
                const std::map<std::string, std::set<std::string>>& vf_pcis,
                std::vector<std::string>& notices) {
  std::vector<v1::PfEvidence*> ptrs;
  for (auto& e : pfs) ptrs.push_back(&e);
  for (auto& e : pfs) {
    if (e.pf_pci().empty()) continue;
    std::vector<v1::PfEvidence*> one{&e};
    std::string text;
    runTool(seams, limits, {"mlxlink", "-d", e.pf_pci(), "-m", "-c", "-e"}, e, &text);
    std::string all = text;
    text.clear();
    runTool(seams, limits, {"mlxconfig", "-d", e.pf_pci(), "q"}, e, &text);
    all += "\n" + text;
    text.clear();
    runTool(seams, limits, {"flint", "-d", e.pf_pci(), "q"}, e, &text);
    all += "\n" + text;
    for (const auto& nd : e.pf_netdevs()) {
      text.clear();
      runTool(seams, limits, {"ethtool", "-m", nd}, e, &text);
      if (!text.empty()) all += "\nethtool -m " + nd + "\n" + text;
    }
    // Run output names no device: it is this PF's.
    auto ev = core::parsePfToolOutput(all);
    ev.links.clear();
    ev.kernel_log.clear();
    addEvidence(ev, one, vf_pcis, "run", notices);
  }
  std::string text;
  v1::PfEvidence scratch;
  runTool(seams, limits, {"dmesg"}, scratch, &text);
  if (!text.empty()) {
    core::PfToolEvidence ev;
    ev.kernel_log = core::parsePfKernelLog(text);
    addEvidence(ev, ptrs, vf_pcis, "dmesg", notices);
  } else {
    for (auto& e : pfs) {
      for (const auto& n : scratch.notes()) e.add_notes(n);
    }
  }
}

// The PFs a paste names strongly (a tool's -d argument, a netdev), in order, deduplicated.
std::vector<std::string> namedPfs(const core::PfToolEvidence& ev) {
  std::vector<std::string> out;
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (const auto& m : ev.mlxlink) add(m.device());
  for (const auto& m : ev.mlxconfig) add(m.device());
  for (const auto& f : ev.flint) add(f.device());
  for (const auto& m : ev.modules) add(m.netdev());
  for (const auto& l : ev.links) add(l.name());
  return out;
}

// A name for the one PF of a paste that names none strongly: the first address its kernel
// log or lspci lines show, else the file.
std::string weakPfName(const core::PfToolEvidence& ev, const std::string& path) {
  for (const auto& line : ev.kernel_log) {
    const auto subject = core::kernelMessageSubjectOf(line.text());
    if (!subject.pci_address.empty()) return subject.pci_address;
    if (!subject.rdma_device.empty()) return subject.rdma_device;
    if (!subject.netdev.empty()) return subject.netdev;
  }
  for (const auto& f : ev.pci_functions) {
    if (!f.address().empty()) return f.address();
  }
  return "(as pasted in " + path + ")";
}

// The PfEvidence for `name` (made the first time): a PCI address, or a device/netdev name.
v1::PfEvidence* pfNamed(std::vector<std::unique_ptr<v1::PfEvidence>>& pfs, const std::string& name,
                        bool netdev) {
  const std::string pci = normalizePci(name);
  for (auto& pf : pfs) {
    if (pf->pf_device() == name || (!pci.empty() && pf->pf_pci() == pci)) return pf.get();
  }
  auto pf = std::make_unique<v1::PfEvidence>();
  pf->set_pf_device(name);
  if (!pci.empty()) pf->set_pf_pci(pci);
  if (netdev) pf->add_pf_netdevs(name);
  pfs.push_back(std::move(pf));
  return pfs.back().get();
}

}  // namespace

HostInspectOutcome inspectPastes(const HostInspectOptions& o, const Clock& clock) {
  HostInspectOutcome outcome;
  auto& in = outcome.inspection;
  in.set_ibcollect_version(o.version);
  in.set_inspected_at_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.now().time_since_epoch())
          .count());
  in.set_host("pasted");
  in.add_notices(
      "judged from the pasted output alone: no host state was read and no VF was looked for "
      "(give --vf or --bundle on the physical host to map VFs to their PFs)");
  std::vector<std::unique_ptr<v1::PfEvidence>> pfs;
  std::map<const v1::PfEvidence*, std::vector<v1::VfMapping>> vfs_of;
  std::vector<std::string> notices;
  for (const auto& p : o.pastes) {
    const auto ev = core::parsePfToolOutput(p.text);
    if (ev.empty()) {
      outcome.unrecognised_pastes.push_back(p.path);
      in.add_notices(p.path + ": nothing recognised: not judged");
      continue;
    }
    std::set<std::string> netdevs;
    for (const auto& m : ev.modules) netdevs.insert(m.netdev());
    for (const auto& l : ev.links) netdevs.insert(l.name());
    std::vector<v1::PfEvidence*> mine;
    auto names = namedPfs(ev);
    if (names.empty()) names.push_back(weakPfName(ev, p.path));
    for (const auto& n : names) mine.push_back(pfNamed(pfs, n, netdevs.count(n) != 0));
    for (auto* pf : mine) pf->add_sources("paste:" + p.path);
    if (mine.size() == 1) {
      core::addAllToPf(ev, *mine.front());  // one adapter's output: all of it is that PF's
    } else {
      addEvidence(ev, mine, {}, "paste:" + p.path, notices);
    }
    for (const auto& l : ev.links) {
      for (auto* pf : mine) {
        if (!netdevOfPf(l.name(), *pf) && mine.size() > 1) continue;
        for (const auto& vf : l.vfs()) {
          v1::VfMapping m;
          m.set_vf_index(static_cast<int32_t>(vf.index()));
          vfs_of[pf].push_back(m);
        }
      }
    }
  }
  for (auto& n : notices) in.add_notices(std::move(n));
  for (const auto& pf : pfs) {
    for (auto& f : core::judgePf(*pf, vfs_of[pf.get()], in.host(), "pasted"))
      *in.add_findings() = std::move(f);
  }
  for (auto& pf : pfs) *in.add_pf() = std::move(*pf);
  core::finishHostInspection(in);
  return outcome;
}

HostInspectOutcome inspectHost(const HostInspectOptions& o, const HostSeams& seams) {
  HostInspectOutcome outcome;
  auto& in = outcome.inspection;
  const bool live = o.root == "/";
  in.set_root(o.root);
  in.set_ibcollect_version(o.version);
  in.set_inspected_at_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(seams.clock.now().time_since_epoch())
          .count());
  in.set_host(hostNameOf(o, seams));
  const std::string source = o.root;

  // Pastes first: an `ip link` VF table is mapping evidence too.
  std::vector<std::pair<std::string, core::PfToolEvidence>> pasted;
  std::vector<v1::PfNetdevLink> links;
  for (const auto& p : o.pastes) {
    auto ev = core::parsePfToolOutput(p.text);
    if (ev.empty()) {
      outcome.unrecognised_pastes.push_back(p.path);
      in.add_notices(
          p.path +
          ": nothing recognised (expected mlxlink, mlxconfig q, flint q, ethtool -m, "
          "ip link show with vf lines, aer_dev_* counters, lspci or a kernel log): not judged");
      continue;
    }
    for (const auto& l : ev.links) links.push_back(l);
    pasted.emplace_back("paste:" + p.path, std::move(ev));
  }
  core::PfToolEvidence live_ip;
  if (live && seams.runner.available("ip")) {
    auto r = seams.runner.run({"ip", "-d", "link", "show"}, o.limits.command_timeout, 4u << 20);
    if (r.ok() && r->exit_code == 0) {
      live_ip.links = core::parsePfIpLink(r->out);
      for (const auto& l : live_ip.links) links.push_back(l);
    }
  }

  const SriovInventory inv = readSriovInventory(seams.host);
  for (const auto& n : inv.notes) in.add_notices(n);
  const auto mapping = mapVfs(o.vfs, inv, links);
  for (const auto& m : mapping) *in.add_vf_map() = m;

  // One PfEvidence per PF that hosts a VF of the case.
  std::map<std::string, std::vector<v1::VfMapping>> vfs_of;  // pf_device → its VFs
  std::map<std::string, std::set<std::string>> vf_pcis;      // pf_pci → every VF PCI
  std::vector<v1::PfEvidence> pfs = pfsOfVfs(mapping, inv, vfs_of, vf_pcis);

  if (!pfs.empty()) {
    readPfSysfs(seams, o.limits, pfs);
    std::vector<v1::PfEvidence*> ptrs;
    for (auto& e : pfs) ptrs.push_back(&e);
    std::vector<std::string> notices;
    for (const auto& [src, ev] : pasted) addEvidence(ev, ptrs, vf_pcis, src, notices);
    if (!live_ip.links.empty()) addEvidence(live_ip, ptrs, vf_pcis, "ip -d link show", notices);
    if (live) {
      runPfTools(seams, o.limits, pfs, vf_pcis, notices);
    } else {
      for (auto& e : pfs) {
        e.add_notes(
            "copied tree: mlxlink, mlxconfig, flint, ethtool -m and dmesg not run; give "
            "their output with --paste");
      }
    }
    for (auto& n : notices) in.add_notices(std::move(n));
  } else if (!pasted.empty()) {
    in.add_notices("no PF of these VFs was found: the pasted PF evidence was not judged");
  }

  for (const auto& e : pfs) {
    for (auto& f : core::judgePf(e, vfs_of[e.pf_device()], in.host(), source))
      *in.add_findings() = std::move(f);
  }
  for (const auto& m : mapping) {
    if (m.vf_index() < 0) *in.add_findings() = core::pfNotFoundFinding(m, in.host(), source);
  }
  for (auto& e : pfs) *in.add_pf() = std::move(e);
  core::finishHostInspection(in);
  return outcome;
}

}  // namespace ibc::agent
