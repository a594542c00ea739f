// Fuzzes the pasted-tool-output parsers: the recogniser and every per-tool parser run on
// the same bytes, and the evidence they return must keep its invariants (bounds, line
// accounting, spans inside the text). A violation aborts, so the fuzzer reports it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibc/core/tool_output.h"

namespace {

using ibc::core::ToolEvidence;

void require(bool condition) {
  if (!condition) std::abort();
}

void check(const ToolEvidence& ev) {
  using namespace ibc::core;
  require(ev.lines_unrecognised <= ev.lines_total);
  require(ev.devices.size() <= kMaxToolDevices);
  require(ev.netdevs.size() <= kMaxToolNetdevs);
  require(ev.sysfs_entries.size() <= kMaxToolSysfsEntries);
  require(ev.tool_errors.size() <= kMaxToolErrors);
  require(ev.driver_infos.size() <= kMaxToolDriverInfos);
  uint64_t previous_last = 0;
  for (const auto& span : ev.spans) {
    require(span.first_line >= 1 && span.first_line <= span.last_line);
    require(span.last_line <= ev.lines_total);
    require(span.first_line > previous_last);
    previous_last = span.last_line;
  }
  std::size_t counters = 0;
  for (const auto& dev : ev.devices) {
    require(!dev.name().empty());
    require(static_cast<std::size_t>(dev.ports_size()) <= kMaxToolPortsPerDevice);
    for (const auto& port : dev.ports()) {
      require(static_cast<std::size_t>(port.counters_size()) <= kMaxToolCounters);
      counters += static_cast<std::size_t>(port.counters_size());
    }
    (void)dev.ByteSizeLong();  // walks every field the parsers set
  }
  for (const auto& netdev : ev.netdevs) {
    require(static_cast<std::size_t>(netdev.ethtool_size()) <= kMaxToolCounters);
    require(static_cast<std::size_t>(netdev.stats_size()) <= kMaxToolCounters);
    counters += static_cast<std::size_t>(netdev.ethtool_size() + netdev.stats_size());
    (void)netdev.ByteSizeLong();
  }
  require(counters <= kMaxToolCountersTotal + kMaxToolCounters);
  for (std::size_t i = 0; i < ev.kinds.size(); ++i) {
    for (std::size_t j = i + 1; j < ev.kinds.size(); ++j) require(ev.kinds[i] != ev.kinds[j]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace ibc::core;
  const ToolEvidence all = parseToolOutput(text);
  check(all);
  for (const std::string_view kind :
       {kKindIbstat, kKindIbstatus, kKindIbvDevinfo, kKindPerfquery, kKindIbportstate,
        kKindIbdev2netdev, kKindEthtoolStats, kKindEthtoolInfo, kKindIpLink, kKindSysfsListing}) {
    const ToolEvidence one = parseToolOutputAs(kind, text);
    check(one);
    require(one.lines_total == all.lines_total);
    require(one.kinds.size() <= 1);
  }
  return 0;
}
