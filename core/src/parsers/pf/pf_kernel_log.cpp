// The host kernel log, wrapped records joined (pf_tools.h parsePfKernelLog).

#include "ibc/core/pf/pf_tools.h"

#include <string>

#include "ibc/core/kernel_log.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"

namespace ibc::core {

namespace {

constexpr std::size_t kMaxJoinedRecord = 1024;

bool stamped(std::string_view line) {
  const auto parsed = parseKernelLogText(line.substr(0, 4 * kMaxJoinedRecord));
  return !parsed.empty() && !parsed.front().timestamp().empty();
}

// A record a mail client or terminal broke cut mid-message: the piece ends in a space (a
// flowed mail keeps it), ',', ':', '(' or '-'.
bool endsMidMessage(std::string_view raw) {
  if (raw.empty()) return false;
  const char c = raw.back();
  return c == ' ' || c == '\t' || c == ',' || c == ':' || c == '(' || c == '-';
}

// Joins the pieces of a wrapped record back onto the stamped line they continue, so the
// message is whole before it is classified ("... PCIe bandwidth, " + "limited by 8.0 GT/s
// PCIe x8 link at ... (capable of 252.048 " + "Gb/s with 16.0 GT/s PCIe x16 link)").
std::string joinWrappedRecords(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool open = false;  // the last line written is a stamped record that may continue
  std::size_t record_start = 0;
  std::string prev_raw;
  forEachLine(text, [&](std::string_view line, uint32_t) {
    const bool blank = trim(line).empty();
    const bool is_record = !blank && stamped(line);
    if (!blank && !is_record && open && endsMidMessage(prev_raw) &&
        out.size() - record_start < kMaxJoinedRecord) {
      out.pop_back();  // the '\n' of the record
      if (!out.empty() && out.back() != ' ' && out.back() != '\t') out.push_back(' ');
      out.append(trim(line));
      out.push_back('\n');
      prev_raw = std::string(line);
      return;
    }
    if (is_record) record_start = out.size();
    out.append(line);
    out.push_back('\n');
    open = is_record;
    prev_raw = std::string(line);
  });
  return out;
}

// The PCI core's downtraining report (drivers/pci/pci.c __pcie_print_link_status): "63.008
// Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:00:01.1 (capable of
// ...)". Pasted on its own it often has no timestamp; it still says what it says.
bool isPcieBandwidthLimited(std::string_view message) {
  return containsIgnoreCase(message, "available PCIe bandwidth, limited by");
}

}  // namespace

std::vector<v1::KernelLogLine> parsePfKernelLog(std::string_view text) {
  const std::string whole = joinWrappedRecords(unwrapPasteMarkup(text));
  auto lines = parseKernelLogText(whole);
  std::vector<v1::KernelLogLine> joined;
  for (auto& l : lines) {
    if (l.timestamp().empty() && !joined.empty() &&
        endsWith(trimRight(joined.back().text()), ":") && !joined.back().timestamp().empty()) {
      joined.back().set_text(printable(joined.back().text() + " " + l.text(), kMaxJoinedRecord));
      continue;
    }
    joined.push_back(std::move(l));
  }
  std::vector<v1::KernelLogLine> out;
  for (auto& l : joined) {
    const bool keep =
        (!l.timestamp().empty() && isRdmaRelevant(l.text())) || isPcieBandwidthLimited(l.text());
    if (!keep) continue;
    out.push_back(std::move(l));
  }
  if (out.size() > kMaxPfKernelLines) {
    out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(kMaxPfKernelLines));
  }
  return out;
}

}  // namespace ibc::core
