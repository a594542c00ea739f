#pragma once

// Private to the PF tool parsers (core/src/parsers/pf/*.cpp): how a line of a pasted tool
// output is read whatever the tool — a "Key : value" field, a shell command line and its
// arguments, a value printed "N/A", a paster's "<--" annotation, a list of numbers. Shapes
// follow mstflint's mlxlink (MlxlinkUi / MlxlinkCmdPrint: "Title\n-----\nKey   : value"),
// mlxconfig's query table, flint's "Key:   value" query and ethtool's sff-8472/8636 dumpers
// ("\t%-41s : %s"); the real captures in tests/fixtures/real/pf/ are the reference.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/pf/pf_tools.h"
#include "ibc/core/text.h"

namespace ibc::core::pf {

inline std::string cap(std::string_view s) { return printable(s, 512); }

inline bool isDashes(std::string_view t) {
  return t.size() >= 3 && std::all_of(t.begin(), t.end(), [](char c) { return c == '-'; });
}

// "Key : value" / "Key: value". The key holds no ':' and starts with a letter.
struct Field {
  std::string_view key;
  std::string_view value;
  bool space_before_colon = false;
};
inline std::optional<Field> splitField(std::string_view line) {
  const std::string_view t = trim(line);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  if (!std::isalpha(static_cast<unsigned char>(t[0]))) return std::nullopt;
  Field f;
  f.key = trimRight(t.substr(0, colon));
  f.value = trim(t.substr(colon + 1));
  f.space_before_colon = f.key.size() < colon;
  if (f.key.empty()) return std::nullopt;
  return f;
}

inline bool isNa(std::string_view v) {
  return v.empty() || startsWithIgnoreCase(v, "N/A") || v == "NA" || v == "-";
}

// A value with the paster's annotation after it ("12  <-- rising", "On <== here"): the value
// alone. ("# comment" tails are already gone: unwrapPasteMarkup.)
inline std::string_view withoutAnnotation(std::string_view v) {
  for (std::string_view arrow : {"<--", "<==", "<-", "\xe2\x86\x90" /* ← */}) {
    if (const auto at = v.find(arrow); at != std::string_view::npos) v = v.substr(0, at);
  }
  return trim(v);
}

// The argument after `flag` in a command line ("-d /dev/mst/mt4115_pciconf0").
inline std::string argAfter(const std::vector<std::string_view>& words, std::string_view flag) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == flag) return cap(words[i + 1]);
  }
  return {};
}

// A shell line that runs `tool` (after any prompt): the words from the tool on.
inline std::optional<std::vector<std::string_view>> commandWords(
    std::string_view line, std::initializer_list<std::string_view> tools) {
  const auto words = splitWhitespace(line);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    if (const auto slash = w.rfind('/'); slash != std::string_view::npos) w = w.substr(slash + 1);
    for (const auto tool : tools) {
      if (w == tool) return std::vector<std::string_view>(words.begin() + i, words.end());
    }
  }
  return std::nullopt;
}

// "26711,0,0,9108", "48, 53, 57, 37", "-1.2,-1.3", "1.427,1.559 [-8.508..5]" (newer mlxlink
// prints the alarm range after the values): numbers only (nullopt on anything else).
inline std::optional<std::vector<double>> numberList(std::string_view v) {
  if (const auto bracket = v.find(" ["); bracket != std::string_view::npos && endsWith(v, "]"))
    v = v.substr(0, bracket);
  std::vector<double> out;
  for (auto part : split(v, ',')) {
    part = trim(part);
    if (part.empty()) continue;
    const auto d = parseDouble(part);
    if (!d) return std::nullopt;
    out.push_back(*d);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

inline std::optional<uint64_t> parseCount(std::string_view v) {
  v = trim(v);
  if (v.empty() || v.size() > 20) return std::nullopt;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t next = n * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != n) return std::nullopt;
    n = next;
  }
  return n;
}

}  // namespace ibc::core::pf
