#pragma once

// Parsers for host facts the agent reads: /proc/modules, DMI strings, /proc/cpuinfo,
// library file names. Pure functions over text.

#include <string>
#include <string_view>
#include <vector>

namespace ibc::core {

// Names of loaded modules that matter for RDMA and GPUDirect (ib_core, ib_uverbs, mlx5_ib,
// mlx5_core, mlx4_*, nvidia, nvidia_peermem, nv_peer_mem, rdma_*, irdma, bnxt_re, efa,
// rdma_rxe, ib_ipoib, ib_umad), in /proc/modules order. Lines that do not parse are
// skipped.
std::vector<std::string> rdmaRelevantModules(std::string_view proc_modules);

// DMI sys_vendor / product_name of a virtual machine (QEMU, KVM, VMware, Hyper-V/Azure,
// Amazon EC2, Google Compute Engine, Xen, OpenStack, VirtualBox, ...).
bool isVirtualMachineDmi(std::string_view sys_vendor, std::string_view product_name);

// True when a "flags" line of /proc/cpuinfo lists "hypervisor".
bool cpuinfoHasHypervisorFlag(std::string_view cpuinfo);

// rdma-core release from libibverbs' file name in a library directory listing:
// "libibverbs.so.1.14.44.0" → "44.0". Empty when absent.
std::string rdmaCoreVersionFromLibraries(const std::vector<std::string>& file_names);

}  // namespace ibc::core
