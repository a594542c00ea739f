// PCIe AER statistics files (pf_tools.h parseAerCounters).

#include "ibc/core/pf/pf_tools.h"

#include <cctype>

#include "ibc/core/text.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::cap;
using pf::parseCount;

std::vector<v1::AerCount> parseAerCounters(std::string_view text, std::string_view kind) {
  std::vector<v1::AerCount> out;
  forEachLine(text, [&](std::string_view line, uint32_t) {
    const auto words = splitWhitespace(line);
    if (words.size() != 2 || out.size() >= kMaxPfFields) return;
    const auto n = parseCount(words[1]);
    if (!n || !std::isalpha(static_cast<unsigned char>(words[0][0]))) return;
    v1::AerCount c;
    c.set_kind(cap(kind));
    c.set_name(cap(words[0]));
    c.set_value(*n);
    out.push_back(std::move(c));
  });
  return out;
}

}  // namespace ibc::core
