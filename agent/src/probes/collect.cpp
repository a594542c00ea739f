// Orchestrates one node's collection: identity, sysfs, netdevs (+ ethtool), kernel log,
// host facts, user-given NCCL artefacts, and the optional counter window.

#include "ibc/agent/collect.h"

#include <algorithm>
#include <thread>

#include "ibc/core/host_facts.h"
#include "ibc/core/kernel_log.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/nccl_tests.h"
#include "ibc/core/proto_text.h"
#include "ibc/core/slurm.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"

namespace ibc::agent {

namespace {

void addError(std::vector<v1::ProbeError>& errors, std::string_view probe, std::string_view path,
              const Error& e) {
  v1::ProbeError pe;
  pe.set_probe(std::string(probe));
  pe.set_path(core::printable(path));
  pe.set_error(std::string(core::errorCodeName(e.code)));
  pe.set_message(core::printable(e.message));
  errors.push_back(std::move(pe));
}

void addError(v1::Snapshot& snap, std::string_view probe, std::string_view path, const Error& e) {
  std::vector<v1::ProbeError> errors;
  addError(errors, probe, path, e);
  *snap.add_probe_errors() = std::move(errors.front());
}

std::optional<std::string> readSmall(const Filesystem& fs, std::string_view path) {
  auto r = fs.readFile(path, 4096);
  if (!r.ok()) return std::nullopt;
  std::string v(core::trim(*r));
  if (v.empty()) return std::nullopt;
  return v;
}

bool isLive(const CollectOptions& o) { return o.root.empty() || o.root == "/"; }

// Text of a possibly huge file: all of it when within the bound, else its head and its
// tail (NCCL's transport choice is at the start of a log, the failure at its end).
Result<std::string> readBoundedText(const Filesystem& files, const std::string& path,
                                    std::size_t bound, bool& truncated) {
  truncated = false;
  bool more = false;
  auto head = files.readFile(path, bound, &more);
  if (!head.ok() || !more) return head;
  truncated = true;
  const std::size_t head_keep = bound / 4;
  // Give the unused part of the head back before the tail is read: the agent runs beside
  // training jobs, and a 1 GiB log must not cost three times the bound.
  std::string text = std::move(*head);
  text.resize(head_keep);
  // Cut at line boundaries so no half line is parsed.
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text.resize(nl + 1);
  text.shrink_to_fit();
  auto tail = files.readTail(path, bound - head_keep);
  if (!tail.ok()) return tail;
  std::string_view t = *tail;
  if (auto nl = t.find('\n'); nl != std::string_view::npos) t.remove_prefix(nl + 1);
  const std::string marker = "[ibcollect: middle of the file skipped, read bound " +
                             std::to_string(bound >> 20) + " MiB]\n";
  text.reserve(text.size() + marker.size() + t.size());
  text += marker;
  text.append(t);
  return text;
}

// Said, not failed: a file past the read bound is analysed by its head and tail.
void notePartlyRead(std::vector<v1::ProbeError>& errors, std::string_view probe,
                    const std::string& path, std::size_t bound) {
  addError(errors, probe, path,
           Error{ErrorCode::TooLarge, "larger than the " + std::to_string(bound >> 20) +
                                          " MiB read bound: analysed its first " +
                                          std::to_string((bound / 4) >> 20) + " MiB and last " +
                                          std::to_string((bound - bound / 4) >> 20) +
                                          " MiB, the middle was skipped"});
}

// Raw text kept in a snapshot: head and tail within `keep` bytes, valid UTF-8.
std::string keepRaw(std::string_view text, std::size_t keep, bool& truncated) {
  if (text.size() <= keep) return core::sanitizeUtf8(text);
  truncated = true;
  const std::size_t head = keep / 4;
  std::string out = core::sanitizeUtf8(text.substr(0, head));
  out += "\n[ibcollect: " + std::to_string(text.size() - keep) + " bytes not kept]\n";
  out += core::sanitizeUtf8(text.substr(text.size() - (keep - head)));
  return out;
}

void collectIdentity(const CollectOptions& o, const HostSeams& seams, const ProcessFacts* facts,
                     v1::Snapshot& snap) {
  v1::NodeIdentity* id = snap.mutable_node();
  id->set_source(isLive(o) ? "/" : o.root);
  id->set_agent_version(o.agent_version);
  id->set_collected_at_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(seams.clock.now().time_since_epoch())
          .count());
  const Filesystem& fs = seams.host;
  if (facts != nullptr && !facts->hostname.empty()) {
    id->set_hostname(facts->hostname);
  } else if (auto h = readSmall(fs, "/proc/sys/kernel/hostname")) {
    id->set_hostname(core::printable(*h));
  } else if (auto h2 = readSmall(fs, "/etc/hostname")) {
    id->set_hostname(core::printable(*h2));
  }
  if (auto k = readSmall(fs, "/proc/sys/kernel/osrelease")) id->set_kernel(core::printable(*k));
  id->set_job_id(!o.job_id.empty() ? o.job_id : (isLive(o) ? seams.env.get("SLURM_JOB_ID") : ""));
  if (isLive(o)) id->set_slurm_node(seams.env.get("SLURMD_NODENAME"));

  // VM identity and virtualization.
  // The VM id the host side finds the VM by: DMI product_uuid, else product_serial (cloud
  // VMs put the instance id in one of them); a value of the wrong shape is no id.
  for (const char* field : {"product_uuid", "product_serial"}) {
    const std::string file = std::string("/sys/class/dmi/id/") + field;
    auto value = fs.readFile(file, 256);
    if (value.ok()) {
      const std::string v = core::printable(core::trim(*value));
      if (!core::isVmIdShaped(v)) continue;
      id->set_vm_id(v);
      id->set_vm_id_source(std::string("dmi ") + field);
      break;
    }
    if (value.error().code == ErrorCode::PermissionDenied) {
      addError(snap, "identity.vm_id", file, value.error());
    }
  }
  std::string evidence;
  const auto vendor = readSmall(fs, "/sys/class/dmi/id/sys_vendor").value_or("");
  const auto product = readSmall(fs, "/sys/class/dmi/id/product_name").value_or("");
  if (core::isVirtualMachineDmi(vendor, product)) {
    evidence = "DMI " + vendor + " / " + product;
  }
  if (evidence.empty()) {
    bool truncated = false;
    if (auto cpu = fs.readFile("/proc/cpuinfo", 64 * 1024, &truncated);
        cpu.ok() && core::cpuinfoHasHypervisorFlag(*cpu)) {
      evidence = "CPU flag hypervisor";
    }
  }
  if (!evidence.empty()) {
    id->set_virtual_machine(true);
    id->set_virtualization_evidence(core::printable(evidence));
  }
}

// A copied tree rarely carries /proc/sys/kernel/hostname. rdma-ndd sets node_desc to
// "<hostname> <device>", so that names the node; failing that, the tree's directory.
std::string hostnameForTree(const std::string& root, const v1::Snapshot& snap) {
  for (const auto& d : snap.devices()) {
    const auto words = core::splitWhitespace(d.node_desc());
    if (words.size() >= 2 && words[0].find('.') != 0) return std::string(words[0]);
  }
  // The last component of the root's path that is not a container's usual name (lexical:
  // the tree is read through the seams, its name only here).
  std::vector<std::string_view> parts;
  for (std::string_view part : core::split(root, '/')) {
    if (!part.empty() && part != ".") parts.push_back(part);
  }
  while (!parts.empty() && (parts.back() == "fixtures" || parts.back() == "root" ||
                            parts.back() == "rootfs" || parts.back() == "sys")) {
    parts.pop_back();
  }
  return parts.empty() ? std::string() : core::printable(parts.back());
}

void collectHostFacts(const CollectOptions& o, const HostSeams& seams, const ProcessFacts* facts,
                      v1::Snapshot& snap) {
  const Filesystem& fs = seams.host;
  v1::HostFacts* h = snap.mutable_host();
  if (auto mods = fs.readFile("/proc/modules", 1u << 20); mods.ok()) {
    h->set_modules_known(true);
    for (auto& m : core::rdmaRelevantModules(*mods)) h->add_modules(std::move(m));
  } else if (mods.error().code != ErrorCode::NotFound || isLive(o)) {
    addError(snap, "host.modules", "/proc/modules", mods.error());
  }
  for (const char* mod : {"mlx5_core", "mlx4_core", "ib_core", "nvidia_peermem"}) {
    if (auto v = readSmall(fs, std::string("/sys/module/") + mod + "/version")) {
      h->add_module_versions(std::string(mod) + " " + core::printable(*v));
      if (std::string(mod) == "mlx5_core" && h->ofed_version().empty())
        h->set_ofed_version(core::printable(*v));
    }
  }
  if (!isLive(o)) return;  // the rest describes the machine we run on, not a tree
  h->set_collected(true);
  if (facts != nullptr && facts->memlock_known) {
    h->set_memlock_unlimited(facts->memlock_unlimited);
    if (!facts->memlock_unlimited) h->set_memlock_soft_bytes(facts->memlock_soft_bytes);
    h->set_memlock_hard_bytes(facts->memlock_hard_bytes);
  }
  auto dev = fs.listDir("/dev/infiniband");
  h->set_uverbs_dir_present(dev.ok());
  if (dev.ok()) {
    for (const auto& name : *dev) {
      if (!core::startsWith(name, "uverbs") && name != "rdma_cm") continue;
      v1::UverbsAccess* u = h->add_uverbs();
      u->set_path("/dev/infiniband/" + name);
      if (auto a = fs.access(u->path()); a.ok()) {
        u->set_readable(a->readable);
        u->set_writable(a->writable);
      } else {
        u->set_error(core::printable(a.error().message));
      }
    }
  }
  for (const char* dir :
       {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu"}) {
    auto names = fs.listDir(dir);
    if (!names.ok()) continue;
    if (auto v = core::rdmaCoreVersionFromLibraries(*names); !v.empty()) {
      h->set_rdma_core_version(v);
      break;
    }
  }
}

void collectKernelLog(const CollectOptions& o, const HostSeams& seams, v1::Snapshot& snap) {
  v1::KernelLog* out = snap.mutable_kernel_log();
  if (!o.dmesg_file.empty()) {
    std::vector<v1::ProbeError> errors;
    readKernelLogFile(seams.files, o.dmesg_file, o.limits, *out, errors);
    for (auto& e : errors) *snap.add_probe_errors() = std::move(e);
    return;
  }
  if (!isLive(o)) {
    out->set_unavailable_reason("not read for a copied tree; pass --dmesg-file");
    return;
  }
  auto records = seams.host.readKmsgRecords("/dev/kmsg", o.limits.kernel_log_bytes);
  if (records.ok()) {
    std::vector<v1::KernelLogLine> lines;
    uint64_t scanned = 0;
    for (const auto& rec : *records) {
      ++scanned;
      auto line = core::parseKmsgRecord(rec);
      if (!line || !core::isRdmaRelevant(line->text())) continue;
      lines.push_back(std::move(*line));
    }
    out->set_source("/dev/kmsg");
    out->set_lines_scanned(scanned);
    out->set_lines_matched(lines.size());
    const std::size_t keep = std::min(lines.size(), o.limits.kernel_lines_kept);
    out->set_truncated(keep < lines.size());
    for (std::size_t i = lines.size() - keep; i < lines.size(); ++i)
      *out->add_lines() = std::move(lines[i]);
    return;
  }
  addError(snap, "kernel_log", "/dev/kmsg", records.error());
  // dmesg may still work (CAP_SYSLOG differs from /dev/kmsg access on some systems).
  auto r = seams.runner.run({"dmesg"}, o.limits.command_timeout, o.limits.kernel_log_bytes);
  if (!r.ok() || r->exit_code != 0) {
    const std::string why =
        !r.ok() ? r.error().message
                : (r->timed_out ? "dmesg timed out" : core::printable(core::trim(r->err)));
    addError(snap, "kernel_log", "dmesg", Error{ErrorCode::Unavailable, why});
    out->set_unavailable_reason("kernel log not readable (/dev/kmsg: " + records.error().message +
                                "; dmesg: " + why + "); run as root or pass --dmesg-file");
    return;
  }
  collectKernelLogText(r->out, "dmesg", o.limits, *out);
}

void collectEthtool(const CollectOptions& o, const HostSeams& seams, v1::Snapshot& snap,
                    bool second_sample) {
  if (!isLive(o) || !seams.runner.available("ethtool")) return;
  for (int i = 0; i < snap.netdevs_size(); ++i) {
    v1::NetDevice* nd = snap.mutable_netdevs(i);
    // ethtool -S matters for RoCE (per-priority pause, discards, PCIe counters) and
    // mlx5 IPoIB; only RDMA-bound or RoCE-capable interfaces are asked.
    if (nd->rdma_device().empty() && !nd->has_ecn()) continue;
    if (second_sample && nd->ethtool_size() == 0) continue;
    auto r = seams.runner.run({"ethtool", "-S", nd->name()}, o.limits.command_timeout, 4u << 20);
    std::string why;
    if (!r.ok())
      why = r.error().message;
    else if (r->timed_out)
      why = "ethtool -S timed out";
    else if (r->exit_code != 0)
      why = core::printable(core::trim(r->err));
    if (!why.empty()) {
      if (!second_sample) nd->set_ethtool_unavailable_reason(why);
      continue;
    }
    auto parsed = core::parseToolOutputAs(core::kKindEthtoolStats, r->out);
    if (parsed.netdevs.empty()) {
      if (!second_sample) nd->set_ethtool_unavailable_reason("ethtool -S printed no statistics");
      continue;
    }
    auto* counters = parsed.netdevs.front().mutable_ethtool();
    if (!second_sample) {
      nd->mutable_ethtool()->Swap(counters);
      continue;
    }
    for (auto& s : *snap.mutable_window(snap.window_size() - 1)->mutable_netdevs()) {
      if (s.name() == nd->name()) s.mutable_ethtool()->Swap(counters);
    }
  }
}

}  // namespace

void collectKernelLogText(std::string_view text, std::string_view source,
                          const CollectLimits& limits, v1::KernelLog& out) {
  core::KernelLogOptions opts;
  opts.source = std::string(source);
  opts.max_lines = limits.kernel_lines_kept;
  out = core::filterKernelLog(text, opts);
}

bool isUserFileError(const v1::ProbeError& e, const std::string& dmesg_file) {
  return e.probe() == "nccl_log" || e.probe() == "nccl_tests" ||
         (e.probe() == "kernel_log" && !dmesg_file.empty() && e.path() == dmesg_file);
}

void readKernelLogFile(const Filesystem& files, const std::string& path,
                       const CollectLimits& limits, v1::KernelLog& out,
                       std::vector<v1::ProbeError>& errors) {
  auto text = files.readTail(path, limits.kernel_log_bytes);
  std::optional<Error> problem;
  if (!text.ok()) {
    problem = text.error();
  } else if (core::trim(*text).empty()) {
    problem = Error{ErrorCode::Malformed, "empty file, no kernel log lines"};
  } else if (text->find('\0') != std::string::npos) {
    problem = Error{ErrorCode::Malformed,
                    "binary data, not a kernel log (expected the text of `dmesg`, `dmesg -T`, "
                    "`journalctl -k` or /var/log/kern.log)"};
  }
  if (problem) {
    addError(errors, "kernel_log", path, *problem);
    out.set_source("file:" + core::printable(path));
    out.set_unavailable_reason(core::printable(problem->message));
    return;
  }
  collectKernelLogText(*text, "file:" + path, limits, out);
  if (out.lines_stamped() == 0 && out.lines_matched() == 0) {
    // Text, but not a kernel log: no line has a dmesg or journal timestamp and none is a
    // kernel message about RDMA, PCIe or links. Said, so that it never reads as "clean".
    const Error e{ErrorCode::Malformed,
                  "no kernel log lines recognised (no line carries a dmesg or journal "
                  "timestamp and none is an RDMA, PCIe or link message; expected the text of "
                  "`dmesg`, `dmesg -T`, `journalctl -k` or /var/log/kern.log)"};
    addError(errors, "kernel_log", path, e);
    out.set_unavailable_reason(e.message);
  }
}

namespace {

v1::NcclLog ncclLogFromText(const std::string& path, const std::string& text, bool truncated,
                            const CollectLimits& limits, const std::string& default_host,
                            std::vector<v1::ProbeError>& errors) {
  v1::NcclLog log;
  log.set_source(core::printable(path));
  if (truncated) notePartlyRead(errors, "nccl_log", path, limits.artifact_read_bytes);
  core::NcclLogOptions opts;
  opts.default_host = default_host;
  *log.mutable_parsed() = core::parseNcclLog(text, opts);
  if (log.parsed().lines_nccl() == 0) {
    // Kept (raw) for the record, but said: an empty or wrong file must not read as "OK".
    addError(errors, "nccl_log", path,
             Error{ErrorCode::Malformed,
                   text.empty() ? "empty file, no NCCL debug lines"
                                : "no NCCL debug lines recognised (expected the log of a run "
                                  "with NCCL_DEBUG=INFO: lines like `host:pid:tid [rank] NCCL "
                                  "INFO ...`)"});
  }
  bool raw_truncated = truncated;
  log.set_raw(keepRaw(text, limits.artifact_raw_kept, raw_truncated));
  log.set_raw_truncated(raw_truncated);
  return log;
}

// The log at `path`, or nullopt when `owners` is given and the hosts NCCL printed in it
// name none of them (no default host for that check: lines without a host prefix say
// nothing about whose file this is). A file that cannot be read is an empty log and an
// error, whatever the owners.
std::optional<v1::NcclLog> readNcclLogOf(const Filesystem& files, const std::string& path,
                                         const CollectLimits& limits,
                                         const std::vector<std::string>* owners,
                                         const std::string& default_host,
                                         std::vector<v1::ProbeError>& errors) {
  bool truncated = false;
  auto text = readBoundedText(files, path, limits.artifact_read_bytes, truncated);
  if (!text.ok()) {
    v1::NcclLog log;
    log.set_source(core::printable(path));
    addError(errors, "nccl_log", path, text.error());
    return log;
  }
  if (owners != nullptr && !ncclLogBelongsTo(core::parseNcclLog(*text), *owners))
    return std::nullopt;
  return ncclLogFromText(path, *text, truncated, limits, default_host, errors);
}

}  // namespace

v1::NcclLog readNcclLog(const Filesystem& files, const std::string& path,
                        const CollectLimits& limits, const std::string& default_host,
                        std::vector<v1::ProbeError>& errors) {
  return *readNcclLogOf(files, path, limits, nullptr, default_host, errors);
}

bool ncclLogBelongsTo(const v1::NcclLogSummary& log, const std::vector<std::string>& node_names) {
  if (log.hosts_size() == 0) return true;
  for (const auto& h : log.hosts()) {
    for (const auto& n : node_names) {
      if (core::sameHostName(h, n)) return true;
    }
  }
  return false;
}

std::optional<v1::NcclLog> readSharedNcclLog(const Filesystem& files, const std::string& path,
                                             const CollectLimits& limits,
                                             const std::vector<std::string>& node_names,
                                             const std::string& default_host,
                                             std::vector<v1::ProbeError>& errors) {
  return readNcclLogOf(files, path, limits, &node_names, default_host, errors);
}

v1::NcclTestsOutput readNcclTests(const Filesystem& files, const std::string& path,
                                  const CollectLimits& limits,
                                  std::vector<v1::ProbeError>& errors) {
  v1::NcclTestsOutput out;
  out.set_source(core::printable(path));
  bool truncated = false;
  auto text = readBoundedText(files, path, limits.artifact_read_bytes, truncated);
  if (!text.ok()) {
    addError(errors, "nccl_tests", path, text.error());
    return out;
  }
  if (truncated) notePartlyRead(errors, "nccl_tests", path, limits.artifact_read_bytes);
  *out.mutable_parsed() = core::parseNcclTests(*text);
  const auto& p = out.parsed();
  if (p.format().empty() && p.rows_size() == 0 && !p.has_avg_busbw() && p.test_name().empty() &&
      p.nranks() < 0) {
    addError(errors, "nccl_tests", path,
             Error{ErrorCode::Malformed,
                   text->empty() ? "empty file, no nccl-tests output"
                                 : "no nccl-tests output recognised (expected what "
                                   "all_reduce_perf or another nccl-tests binary prints: the "
                                   "`# size count type redop ...` table and its rows)"});
  }
  bool raw_truncated = truncated;
  out.set_raw(keepRaw(*text, limits.artifact_raw_kept, raw_truncated));
  out.set_raw_truncated(raw_truncated);
  return out;
}

v1::Snapshot collectSnapshot(const CollectOptions& o, const HostSeams& seams) {
  v1::Snapshot snap;
  snap.set_schema_version(core::kSnapshotSchemaVersion);
  std::optional<ProcessFacts> facts;
  if (isLive(o) && seams.process_facts) facts = seams.process_facts();
  const ProcessFacts* f = facts ? &*facts : nullptr;

  if (o.window_start && o.window.count() > 0) {
    // Align the first sample with the other nodes of the job.
    const auto wait = *o.window_start - seams.clock.now();
    if (wait > std::chrono::milliseconds(0) && wait < std::chrono::minutes(5)) {
      seams.clock.sleepUntil(seams.clock.steadyNow() +
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait));
    }
  }
  collectIdentity(o, seams, f, snap);
  SysfsLayout layout;
  collectRdmaDevices(seams.host, o.limits, snap, layout);
  collectNetdevs(seams.host, o.limits, snap, layout);
  if (snap.node().hostname().empty())
    snap.mutable_node()->set_hostname(hostnameForTree(o.root, snap));
  collectEthtool(o, seams, snap, false);
  const auto first_sample_at = seams.clock.steadyNow();
  const auto first_wall = seams.clock.now();

  collectKernelLog(o, seams, snap);
  collectHostFacts(o, seams, f, snap);
  std::vector<v1::ProbeError> errors;
  const std::string host = snap.node().hostname();
  for (const auto& p : o.nccl_logs)
    *snap.add_nccl_logs() = readNcclLog(seams.files, p, o.limits, host, errors);
  if (!o.shared_nccl_logs.empty()) {
    std::vector<std::string> names = o.node_names;
    names.push_back(host);
    for (const auto& p : o.shared_nccl_logs) {
      if (auto log = readSharedNcclLog(seams.files, p, o.limits, names, host, errors))
        *snap.add_nccl_logs() = std::move(*log);
    }
  }
  for (const auto& p : o.nccl_tests)
    *snap.add_nccl_tests() = readNcclTests(seams.files, p, o.limits, errors);
  for (auto& e : errors) *snap.add_probe_errors() = std::move(e);

  if (o.window.count() > 0) {
    if (seams.progress) {
      seams.progress("sampling counters again in " +
                     std::to_string(o.window.count() / 1000.0).substr(0, 4) + " s (--window)");
    }
    seams.clock.sleepUntil(first_sample_at + o.window);
    const auto second_wall = seams.clock.now();
    const auto second_steady = seams.clock.steadyNow();
    sampleWindowCounters(seams.host, o.limits, layout, snap);
    collectEthtool(o, seams, snap, true);
    v1::CounterWindow* w = snap.mutable_window(snap.window_size() - 1);
    w->set_start_unix_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(first_wall.time_since_epoch())
            .count());
    w->set_end_unix_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(second_wall.time_since_epoch())
            .count());
    w->set_interval_seconds(std::chrono::duration<double>(second_steady - first_sample_at).count());
  }
  // proto3 strings must be UTF-8, or the signed snapshot could not be read back. The
  // parsers keep what they store printable; this is the guarantee, and it says so if it
  // ever had to act.
  if (const std::size_t n = core::sanitizeStringFields(snap); n > 0) {
    addError(snap, "snapshot", "",
             Error{ErrorCode::Malformed, std::to_string(n) +
                                             " text value(s) held bytes that are not UTF-8 text "
                                             "or control characters; replaced with '?'"});
  }
  return snap;
}

}  // namespace ibc::agent
