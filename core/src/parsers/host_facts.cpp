#include "ibc/core/host_facts.h"

#include <array>

#include "ibc/core/text.h"

namespace ibc::core {

std::vector<std::string> rdmaRelevantModules(std::string_view proc_modules) {
  static constexpr std::array<std::string_view, 22> kInteresting{
      "ib_core",     "ib_uverbs", "ib_umad", "ib_ipoib",  "ib_cm",   "rdma_cm",
      "rdma_ucm",    "mlx5_core", "mlx5_ib", "mlx4_core", "mlx4_ib", "mlx4_en",
      "irdma",       "bnxt_re",   "efa",     "rdma_rxe",  "nvidia",  "nvidia_peermem",
      "nv_peer_mem", "hfi1",      "qedr",    "siw"};
  std::vector<std::string> out;
  forEachLine(proc_modules, [&](std::string_view line, uint32_t) {
    const auto space = line.find(' ');
    const std::string_view name = line.substr(0, space);
    for (auto k : kInteresting) {
      if (k == name) {
        out.emplace_back(name);
        break;
      }
    }
  });
  return out;
}

bool isVirtualMachineDmi(std::string_view sys_vendor, std::string_view product_name) {
  static constexpr std::array<std::string_view, 10> kVendors{
      "QEMU",   "KVM",       "VMware",  "Xen",       "Amazon EC2",
      "Google", "OpenStack", "innotek", "Parallels", "Alibaba Cloud"};
  for (auto v : kVendors) {
    if (containsIgnoreCase(sys_vendor, v)) return true;
  }
  static constexpr std::array<std::string_view, 7> kProducts{
      "Virtual Machine", "KVM",       "VMware", "HVM domU", "Google Compute Engine",
      "OpenStack Nova",  "VirtualBox"};
  for (auto p : kProducts) {
    if (containsIgnoreCase(product_name, p)) return true;
  }
  // Amazon Nitro instances report sys_vendor "Amazon EC2" (above); bare-metal ".metal"
  // product names are not VMs.
  return false;
}

bool cpuinfoHasHypervisorFlag(std::string_view cpuinfo) {
  bool found = false;
  forEachLine(cpuinfo, [&](std::string_view line, uint32_t) {
    if (found || !startsWith(line, "flags")) return;
    for (auto tok : splitWhitespace(line)) {
      if (tok == "hypervisor") {
        found = true;
        return;
      }
    }
  });
  return found;
}

std::string rdmaCoreVersionFromLibraries(const std::vector<std::string>& file_names) {
  constexpr std::string_view kPrefix = "libibverbs.so.1.";
  for (const auto& n : file_names) {
    if (!startsWith(n, kPrefix)) continue;
    // libibverbs.so.1.<abi>.<rdma-core major>.<minor>
    auto parts = split(std::string_view(n).substr(kPrefix.size()), '.');
    if (parts.size() >= 3) return std::string(parts[1]) + "." + std::string(parts[2]);
  }
  return {};
}

}  // namespace ibc::core
