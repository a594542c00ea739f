// Host rules: MEMLOCK_LIMIT, UVERBS_ACCESS, PEERMEM_MISSING, PCIE_LINK_DEGRADED.

#include <algorithm>

#include "ibc/core/text.h"
#include "rules_internal.h"

namespace ibc::core::rules {

namespace {

std::string bytesText(uint64_t b) {
  if (b >= (1ull << 30))
    return num(static_cast<double>(b) / static_cast<double>(1ull << 30)) + " GiB";
  if (b >= (1ull << 20))
    return num(static_cast<double>(b) / static_cast<double>(1ull << 20)) + " MiB";
  if (b >= 1024) return num(static_cast<double>(b) / 1024.0) + " KiB";
  return std::to_string(b) + " bytes";
}

bool hasModule(const v1::HostFacts& h, std::string_view name) {
  return std::any_of(h.modules().begin(), h.modules().end(),
                     [&](const std::string& m) { return m == name; });
}

bool anyLiveDevice(const v1::Snapshot& s) {
  return std::any_of(s.devices().begin(), s.devices().end(),
                     [](const v1::RdmaDevice& d) { return d.missing_reason().empty(); });
}

bool ncclUsesGdr(const v1::Snapshot& s) {
  for (const auto& log : s.nccl_logs()) {
    for (const auto& t : log.parsed().transports()) {
      if (t.gdr()) return true;
    }
  }
  return false;
}

void memlock(RuleContext& ctx) {
  const auto& h = ctx.snap.host();
  if (!h.collected() || h.memlock_unlimited() || !h.has_memlock_soft_bytes()) return;
  if (!anyLiveDevice(ctx.snap)) return;
  const uint64_t soft = h.memlock_soft_bytes();
  std::vector<std::string> ev{"RLIMIT_MEMLOCK soft " + bytesText(soft)};
  if (h.has_memlock_hard_bytes()) {
    ev.push_back(h.memlock_hard_bytes() == 0 ? "hard unlimited"
                                             : "hard " + bytesText(h.memlock_hard_bytes()));
  }
  // A limit is a risk; registrations failing under it (NCCL REG_MR_FAILED) make it the cause.
  bool reg_failed = false;
  for (const auto& log : ctx.snap.nccl_logs()) {
    for (const auto& e : log.parsed().events())
      reg_failed |= e.kind() == v1::NcclEvent::REG_MR_FAILED;
  }
  if (reg_failed) ev.push_back("NCCL reported memory registration failures on this node");
  ctx.add({FindingCode::MemlockLimit, reg_failed ? Severity::Critical : Severity::Warning, "", "",
           0,
           "Locked-memory limit is " + bytesText(soft) +
               ", not unlimited: RDMA memory registration "
               "will fail for large buffers",
           std::move(ev),
           "Run jobs with `ulimit -l unlimited`: add `* - memlock unlimited` under "
           "/etc/security/limits.d/, for Slurm set PropagateResourceLimitsExcept=MEMLOCK (or "
           "LimitMEMLOCK=infinity in slurmd's unit), for containers pass --ulimit memlock=-1."});
}

void uverbs(RuleContext& ctx) {
  const auto& h = ctx.snap.host();
  if (!h.collected() || !anyLiveDevice(ctx.snap)) return;
  if (!h.uverbs_dir_present()) {
    ctx.add({FindingCode::UverbsAccess,
             Severity::Critical,
             "",
             "",
             0,
             "RDMA devices exist but /dev/infiniband is missing: no process can use verbs",
             {"/dev/infiniband: not present"},
             "Load ib_uverbs (`modprobe ib_uverbs`); in a container pass the devices "
             "(`--device=/dev/infiniband` or the RDMA device plugin)."});
    return;
  }
  std::vector<std::string> bad;
  int uverbs_count = 0;
  for (const auto& u : h.uverbs()) {
    if (u.path().find("uverbs") == std::string::npos) continue;
    ++uverbs_count;
    if (!u.readable() || !u.writable()) {
      bad.push_back(u.path() + (u.error().empty() ? "" : " (" + u.error() + ")") +
                    (u.readable() ? "" : " not readable") + (u.writable() ? "" : " not writable"));
    }
  }
  if (uverbs_count == 0) {
    bad.push_back("/dev/infiniband has no uverbs* device");
  }
  if (bad.empty()) return;
  ctx.add({FindingCode::UverbsAccess, Severity::Critical, "", "", 0,
           "This user cannot open the verbs devices: NCCL cannot use NET/IB", std::move(bad),
           "Give the job read/write access to /dev/infiniband/uverbs* (rdma-core udev rules set "
           "0666; check local overrides), load ib_uverbs, and in containers pass the devices."});
}

void peermem(RuleContext& ctx) {
  const auto& h = ctx.snap.host();
  if (!h.collected() || !h.modules_known() || !anyLiveDevice(ctx.snap)) return;
  if (!hasModule(h, "nvidia")) return;  // no GPU driver: not a GPUDirect node
  if (hasModule(h, "nvidia_peermem") || hasModule(h, "nv_peer_mem")) return;
  if (ncclUsesGdr(ctx.snap)) return;  // GDR works (dma-buf path)
  ctx.add({FindingCode::PeermemMissing,
           Severity::Warning,
           "",
           "",
           0,
           "GPU driver loaded without nvidia_peermem: GPUDirect RDMA is unavailable unless "
           "NCCL uses dma-buf",
           {"nvidia loaded", "nvidia_peermem and nv_peer_mem not loaded"},
           "`modprobe nvidia_peermem` (ship it in the image's module load list); check NCCL "
           "logs for `GPU Direct RDMA Enabled`/`DMABUF`. Without GDR, NCCL stages through host "
           "memory and inter-node bandwidth drops."});
}

void pcieLink(RuleContext& ctx) {
  for (const auto& dev : ctx.snap.devices()) {
    if (!dev.has_pci()) continue;
    // A VF's (or a VM's) PCIe link attributes describe an emulated or shared link, not
    // the HCA's slot: guests routinely show "2.5 GT/s x1". Only the kernel's own
    // "limited by" line (kernel log rules) is trusted there.
    if (physicalFunctionIsRemote(ctx.snap, dev)) continue;
    const auto& p = dev.pci();
    const bool slower = p.current_link_gts() > 0 && p.max_link_gts() > 0 &&
                        p.current_link_gts() + 1e-6 < p.max_link_gts();
    const bool narrower = p.current_link_lanes() > 0 && p.max_link_lanes() > 0 &&
                          p.current_link_lanes() < p.max_link_lanes();
    if (!slower && !narrower) continue;
    ctx.add({FindingCode::PcieLinkDegraded,
             Severity::Warning,
             "",
             dev.name(),
             0,
             dev.name() + " PCIe link runs at " + num(p.current_link_gts()) + " GT/s x" +
                 std::to_string(p.current_link_lanes()) + ", capable of " + num(p.max_link_gts()) +
                 " GT/s x" + std::to_string(p.max_link_lanes()),
             {"current_link_speed \"" + p.current_link_speed() + "\" current_link_width " +
                  p.current_link_width(),
              "max_link_speed \"" + p.max_link_speed() + "\" max_link_width " + p.max_link_width(),
              "PCI " + p.address()},
             "The HCA's PCIe link trained down: host bandwidth caps the network. Reseat the card "
             "or riser, check BIOS slot settings and the slot's lane wiring."});
  }
}

}  // namespace

void runHostRules(RuleContext& ctx) {
  memlock(ctx);
  uverbs(ctx);
  peermem(ctx);
  pcieLink(ctx);
}

}  // namespace ibc::core::rules
