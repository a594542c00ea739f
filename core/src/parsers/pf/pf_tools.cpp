// A whole paste of PF tools (pf_tools.h parsePfToolOutput): which tools it holds, each
// parsed by its own parser; AER counters recognised in `grep .` listings and bare files.

#include "ibc/core/pf/pf_tools.h"

#include <string>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"

namespace ibc::core {

namespace {

// `grep . /sys/bus/pci/devices/X/aer_dev_KIND` lines ("PATH:Name N") and bare AER files.
std::vector<v1::AerCount> aerInPaste(std::string_view text) {
  std::vector<v1::AerCount> out;
  std::vector<v1::AerCount> bare;  // a bare file's lines until its TOTAL_ERR_* line
  forEachLine(text, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (out.size() >= kMaxPfFields) return;
    const auto at = t.find("aer_dev_");
    if (at != std::string_view::npos) {
      const auto colon = t.find(':', at);
      if (colon == std::string_view::npos) return;
      const std::string_view kind = t.substr(at + 8, colon - at - 8);
      if (kind != "correctable" && kind != "fatal" && kind != "nonfatal") return;
      for (auto& c : parseAerCounters(t.substr(colon + 1), kind)) out.push_back(std::move(c));
      return;
    }
    auto one = parseAerCounters(t, "");
    if (one.size() != 1) {
      bare.clear();
      return;
    }
    const std::string name = one[0].name();
    bare.push_back(std::move(one[0]));
    std::string kind;
    if (name == "TOTAL_ERR_COR") kind = "correctable";
    if (name == "TOTAL_ERR_FATAL") kind = "fatal";
    if (name == "TOTAL_ERR_NONFATAL") kind = "nonfatal";
    if (kind.empty()) return;
    for (auto& c : bare) {
      c.set_kind(kind);
      out.push_back(std::move(c));
    }
    bare.clear();
  });
  return out;
}

}  // namespace

PfToolEvidence parsePfToolOutput(std::string_view text) {
  PfToolEvidence ev;
  ev.mlxlink = parseMlxlink(text);
  ev.mlxconfig = parseMlxconfig(text);
  ev.flint = parseFlintQuery(text);
  ev.modules = parseEthtoolModule(text);
  ev.links = parsePfIpLink(text);
  ev.aer = aerInPaste(unwrapPasteMarkup(text));
  ev.kernel_log = parsePfKernelLog(text);
  ev.pci_functions = parseLspci(text);
  if (!ev.mlxlink.empty()) ev.kinds.emplace_back(kKindMlxlink);
  if (!ev.mlxconfig.empty()) ev.kinds.emplace_back(kKindMlxconfig);
  if (!ev.flint.empty()) ev.kinds.emplace_back(kKindFlint);
  if (!ev.modules.empty()) ev.kinds.emplace_back(kKindEthtoolModule);
  if (!ev.links.empty()) ev.kinds.emplace_back(kKindPfIpLink);
  if (!ev.aer.empty()) ev.kinds.emplace_back(kKindAer);
  if (!ev.kernel_log.empty()) ev.kinds.emplace_back(kKindPfKernelLog);
  if (!ev.pci_functions.empty()) ev.kinds.emplace_back(kKindLspci);
  return ev;
}

void addAllToPf(const PfToolEvidence& ev, v1::PfEvidence& pf) {
  for (const auto& m : ev.mlxlink) *pf.add_mlxlink() = m;
  for (const auto& m : ev.modules) *pf.add_modules() = m;
  for (const auto& l : ev.links) *pf.add_links() = l;
  for (const auto& l : ev.kernel_log) *pf.add_kernel_log() = l;
  for (const auto& a : ev.aer) *pf.add_aer() = a;
  for (const auto& f : ev.flint) *pf.add_flint() = f;
  for (const auto& c : ev.mlxconfig) *pf.add_mlxconfig() = c;
  for (const auto& f : ev.pci_functions) *pf.add_pci_functions() = f;
}

}  // namespace ibc::core
