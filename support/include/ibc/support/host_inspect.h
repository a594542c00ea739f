#pragma once

// `ibcollect host-inspect` (docs/formats.md): on the physical host, find the PF and VF index that
// host each suspect VF, collect the PF side the tenant cannot see and judge it with the
// PF_* codes (core/pf_judge.h). Reads the host only through the seams of os.h; under a
// copied tree (--root other than "/") nothing is run and every read stays beneath the root.

#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/collect.h"
#include "ibc/core/pf/pf_tools.h"
#include "ibc/os/os.h"
#include "ibcollect/v1/host.pb.h"

namespace ibc::agent {

// One VF to look for: what the tenant side knows about it. Identities are normalised:
// GUIDs as 16 lower-case hex digits, MACs as "aa:bb:cc:dd:ee:ff", PCI addresses with
// their domain ("0000:42:00.2"). A GUID given with --vf may be the node or the port GUID.
struct VfQuery {
  std::string node;    // tenant node (from a bundle); "" for --vf
  std::string device;  // the VF's device in the guest, or the --vf text
  std::string node_guid;
  std::string port_guid;
  std::string guid;  // node or port GUID
  std::string mac;
  std::string pci;  // host PCI address of the VF
};

// `--vf GUID|MAC|PCI`: a GUID ("0x248a070300a1b2c3", "248a:0703:00a1:b2c3",
// "24:8a:07:03:00:a1:b2:c3"), a MAC ("b8:59:9f:c1:ec:12" or with '-') or a PCI address
// ("0000:42:00.2", "42:00.2"). InvalidArgument names what the text is not.
Result<VfQuery> parseVfArgument(std::string_view text);

// "248a07..." (16 hex digits) from any GUID spelling; "" when the text is no GUID.
std::string normalizeGuid(std::string_view text);
// "aa:bb:cc:dd:ee:ff"; "" when the text is no MAC.
std::string normalizeMac(std::string_view text);
// "0000:42:00.2"; "" when the text is no PCI address.
std::string normalizePci(std::string_view text);

// One SR-IOV PF as sysfs shows it (/sys/bus/pci/devices/<pf>/{sriov_numvfs,virtfnN,
// sriov/N/{node,port,mac,policy}}, infiniband/, net/).
struct SriovVf {
  int32_t index = -1;
  std::string pci;        // target of virtfnN; "" when only sriov/N exists
  std::string node_guid;  // normalised; "" when unreadable or all zero
  std::string port_guid;
  std::string mac;
  std::string policy;  // "Up", "Down", "Follow"
};
struct SriovPf {
  std::string pci;
  std::string dir;  // sysfs directory of the PF
  std::vector<std::string> rdma_devices;
  std::vector<std::string> netdevs;
  uint32_t numvfs = 0;
  uint32_t totalvfs = 0;
  std::vector<SriovVf> vfs;
};
struct SriovInventory {
  std::vector<SriovPf> pfs;
  std::vector<std::string> notes;  // what could not be read
};
SriovInventory readSriovInventory(const Filesystem& fs);

// Maps every query to a PF and VF index (sysfs first, then the PF netdevs' VF tables in
// `links`); a VF that matches nothing has vf_index -1 and `compared` says what it was
// compared with.
std::vector<v1::VfMapping> mapVfs(const std::vector<VfQuery>& queries, const SriovInventory& inv,
                                  const std::vector<v1::PfNetdevLink>& links);

struct PastedFile {
  std::string path;
  std::string text;
};

struct HostInspectOptions {
  std::string root = "/";
  std::vector<VfQuery> vfs;
  std::vector<PastedFile> pastes;
  std::string version;
  CollectLimits limits;
};

struct HostInspectOutcome {
  v1::HostInspection inspection;
  // Paste files in which nothing was recognised (the report says so; the CLI exits 4).
  std::vector<std::string> unrecognised_pastes;
};

// Inventory, mapping, PF evidence (sysfs, AER, pastes, and on the live host mlxlink,
// mlxconfig, flint, ethtool -m, ip -d link and dmesg when installed), judgement.
HostInspectOutcome inspectHost(const HostInspectOptions& options, const HostSeams& seams);

// A provider's pastes on their own (options.vfs empty): judges the PF(s) the pastes name,
// reading no host state (no root needed, options.root unused). Each paste names its PFs by
// the -d of mlxlink/mlxconfig/flint, the netdev of `ethtool -m` or `ip link`; a paste that
// names none (or only through its kernel log or lspci lines) is one PF, named by the
// first address it shows, else by the file. The VFs an `ip link` paste lists are that PF's
// VFs. Same judgement (judgePf) as inspectHost; no PF_NOT_FOUND, since no VF is looked for.
HostInspectOutcome inspectPastes(const HostInspectOptions& options, const Clock& clock);

}  // namespace ibc::agent
