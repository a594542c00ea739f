// Fuzzes the PF-side parsers (host-inspect --paste): every parser and the recogniser run on
// the same bytes and must keep their bounds; the judge must take whatever they return and
// always say something (a PF finding, PF_CLEAN or PORT_STATE_UNKNOWN). A violation aborts.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/pf_judge.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ibc::core;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ev = parsePfToolOutput(text);
  require(ev.mlxlink.size() <= kMaxPfReports && ev.mlxconfig.size() <= kMaxPfReports);
  require(ev.flint.size() <= kMaxPfReports && ev.modules.size() <= kMaxPfReports);
  require(ev.links.size() <= kMaxPfReports && ev.aer.size() <= kMaxPfFields);
  require(ev.kernel_log.size() <= kMaxPfKernelLines);
  require(ev.empty() == ev.kinds.empty());
  for (const auto& m : ev.mlxlink)
    require(static_cast<std::size_t>(m.fields_size()) <= kMaxPfFields);
  for (const auto& l : ev.links) require(static_cast<std::size_t>(l.vfs_size()) <= kMaxPfVfs);
  require(parseMlxlink(text).size() == ev.mlxlink.size());
  require(parseAerCounters(text, "correctable").size() <= kMaxPfFields);
  v1::PfEvidence pf;
  pf.set_pf_device("mlx5_0");
  for (const auto& m : ev.mlxlink) *pf.add_mlxlink() = m;
  for (const auto& m : ev.modules) *pf.add_modules() = m;
  for (const auto& l : ev.links) *pf.add_links() = l;
  for (const auto& a : ev.aer) *pf.add_aer() = a;
  for (const auto& k : ev.kernel_log) *pf.add_kernel_log() = k;
  const auto findings = judgePf(pf, {}, "h", "fuzz");
  require(!findings.empty());
  for (const auto& f : findings) (void)f.ByteSizeLong();
  return 0;
}
