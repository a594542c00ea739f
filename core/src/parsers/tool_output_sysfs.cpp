// Block parser for `grep . /sys/...` style listings: one "PATH:VALUE" per line, as grep
// prints a match with its file name.

#include <cctype>

#include "ibc/core/text.h"
#include "tool_output_internal.h"

namespace ibc::core::tool_output {

namespace {

bool isBusIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

// Position of the ':' grep put between the file name and the value. Sysfs paths hold ':'
// inside bus addresses ("pci0000:05/0000:05:02.0/"); such a ':' sits in a component made
// of hex digits, '.' and ':' that a '/' ends. Values hold ':' too ("4: ACTIVE", GIDs), and
// '/' ("N/A (no PMA)", "100 Gb/sec"), but not in that shape.
std::optional<std::size_t> sysfsSeparator(std::string_view t) {
  std::size_t component = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '/') {
      component = i + 1;
      continue;
    }
    if (c == ' ' || c == '\t') return std::nullopt;  // sysfs paths hold no blanks
    if (c != ':') continue;
    std::size_t j = i + 1;
    while (j < t.size() &&
           (std::isxdigit(static_cast<unsigned char>(t[j])) || t[j] == '.' || t[j] == ':')) {
      ++j;
    }
    bool bus_id = j > i + 1 && j < t.size() && t[j] == '/' && i > component;
    for (std::size_t k = component; bus_id && k < i; ++k) bus_id = isBusIdChar(t[k]);
    if (!bus_id) return i;
    i = j - 1;  // the loop then sees the '/' that ends the component
  }
  return std::nullopt;
}

bool parseSysfsLine(std::string_view line, EvidenceBuilder& out) {
  if (startsWith(line, "grep: /sys/")) {  // "grep: /sys/...: Invalid argument"
    out.addError(line);
    return true;
  }
  if (startsWith(line, "Binary file /sys/")) return true;
  if (!startsWith(line, "/sys/") || line.size() <= 5) return false;
  const auto sep = sysfsSeparator(line);
  if (!sep || *sep <= 5) return false;
  out.addSysfsEntry(line.substr(0, *sep), line.substr(*sep + 1));
  return true;
}

}  // namespace

bool parseSysfsListingBlock(LineCursor& cursor, EvidenceBuilder& out) {
  if (!parseSysfsLine(cursor.line(), out)) return false;
  cursor.next();
  while (!cursor.atEnd() && parseSysfsLine(cursor.line(), out)) cursor.next();
  return true;
}

}  // namespace ibc::core::tool_output
