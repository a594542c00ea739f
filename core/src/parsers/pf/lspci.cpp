// `lspci [-nn] [-vvv]` output (pf_tools.h parseLspci).

#include "ibc/core/pf/pf_tools.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::argAfter;
using pf::cap;
using pf::commandWords;
using pf::parseCount;

namespace {

bool isHexDigits(std::string_view s, std::size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

// "[DOMAIN:]BB:DD.F" as lspci prints a function's address.
bool isPciAddress(std::string_view w) {
  const auto dot = w.rfind('.');
  if (dot == std::string_view::npos || dot + 2 != w.size() || w[dot + 1] < '0' || w[dot + 1] > '7')
    return false;
  const auto parts = split(w.substr(0, dot), ':');
  if (parts.size() == 2) return isHexDigits(parts[0], 2) && isHexDigits(parts[1], 2);
  if (parts.size() == 3)
    return parts[0].size() >= 4 && isHexDigits(parts[0], parts[0].size()) &&
           isHexDigits(parts[1], 2) && isHexDigits(parts[2], 2);
  return false;
}

// A function's first line: "0b:00.0 Ethernet controller [0200]: Mellanox ..." (`lspci`,
// `-nn`, `-vvv`) or "0b:00.0 0200: 15b3:1015" (`-n`).
std::optional<std::pair<std::string_view, std::string_view>> lspciHeader(std::string_view t) {
  const auto space = t.find_first_of(" \t");
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view address = t.substr(0, space);
  const std::string_view rest = trim(t.substr(space));
  if (!isPciAddress(address) || rest.find(": ") == std::string_view::npos) return std::nullopt;
  return std::make_pair(address, rest);
}

// "Speed 8GT/s (downgraded), Width x8 (ok), TrErr- ..." → 8 GT/s, 8 lanes ("Speed
// unknown", "Width x0" leave them unset).
void linkSpeedWidth(std::string_view line, std::optional<double>& gts,
                    std::optional<uint32_t>& lanes) {
  const auto words = splitWhitespace(line);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    std::string_view v = words[i + 1];
    while (!v.empty() && (v.back() == ',' || v.back() == ';')) v.remove_suffix(1);
    if (words[i] == "Speed") {
      if (const auto at = v.find("GT/s"); at != std::string_view::npos && at > 0) {
        if (auto d = parseDouble(v.substr(0, at)); d && *d > 0) gts = *d;
      }
    } else if (words[i] == "Width" && v.size() > 1 && (v[0] == 'x' || v[0] == 'X')) {
      if (auto n = parseCount(v.substr(1)); n && *n > 0 && *n <= 64)
        lanes = static_cast<uint32_t>(*n);
    }
  }
}

// "UESta:  DLP- SDES- TLP+ ..." → the names marked '+' ("TLP").
std::vector<std::string> flagsSet(std::string_view values) {
  std::vector<std::string> out;
  for (auto w : splitWhitespace(values)) {
    while (!w.empty() && w.back() == ',') w.remove_suffix(1);
    if (w.size() > 1 && w.back() == '+' && std::isalpha(static_cast<unsigned char>(w[0])) &&
        out.size() < 64)
      out.push_back(cap(w.substr(0, w.size() - 1)));
  }
  return out;
}

// The first word of a line if it is an lspci capability key ("LnkSta:", "UESta:").
std::string_view lspciKey(std::string_view t) {
  const auto end = t.find_first_of(" \t");
  const std::string_view w = t.substr(0, end);
  if (w.size() < 3 || w.back() != ':') return {};
  return w.substr(0, w.size() - 1);
}

void finishLink(v1::PciFunctionStatus& f) {
  // A VF has no link of its own: lspci prints "Speed unknown (downgraded), Width x0
  // (downgraded)" for it, which says nothing about the device's link.
  if (f.link_sta().empty() || (!f.has_sta_gts() && !f.has_sta_lanes())) return;
  bool down = containsIgnoreCase(f.link_sta(), "downgraded");
  if (f.has_cap_gts() && f.has_sta_gts() && f.sta_gts() < f.cap_gts()) down = true;
  if (f.has_cap_lanes() && f.has_sta_lanes() && f.sta_lanes() < f.cap_lanes()) down = true;
  f.set_link_downgraded(down);
}

}  // namespace

namespace {

// The AER registers gathered for one function, applied: a bit set in a status register and
// in its mask register is one the platform chose not to report (mlx5 PFs ship with
// AdvNonFatalErr masked and often set): not an error.
void applyAerRegisters(v1::PciFunctionStatus& f,
                       std::map<std::string, std::string, std::less<>>& aer) {
  auto contains = [](const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  const auto ue_mask = flagsSet(aer["UEMsk"]);
  const auto ue_fatal = flagsSet(aer["UESvrt"]);
  for (const auto& n : flagsSet(aer["UESta"])) {
    if (contains(ue_mask, n)) continue;
    f.add_uncorrectable_set(n);
    if (contains(ue_fatal, n)) f.add_uncorrectable_fatal(n);
  }
  const auto ce_mask = flagsSet(aer["CEMsk"]);
  for (const auto& n : flagsSet(aer["CESta"])) {
    if (!contains(ce_mask, n)) f.add_correctable_set(n);
  }
  if (!aer["UESta"].empty()) f.set_ue_sta(cap("UESta: " + aer["UESta"]));
  if (!aer["CESta"].empty()) f.set_ce_sta(cap("CESta: " + aer["CESta"]));
}

// An "LnkCap:" or "LnkSta:" line (`line`, its values after the key) of a function.
void setLink(v1::PciFunctionStatus& f, bool capability, std::string_view line,
             std::string_view values) {
  std::optional<double> gts;
  std::optional<uint32_t> lanes;
  linkSpeedWidth(values, gts, lanes);
  if (capability) {
    f.set_link_cap(cap(line));
    if (gts) f.set_cap_gts(*gts);
    if (lanes) f.set_cap_lanes(*lanes);
  } else {
    f.set_link_sta(cap(line));
    if (gts) f.set_sta_gts(*gts);
    if (lanes) f.set_sta_lanes(*lanes);
  }
}

}  // namespace

std::vector<v1::PciFunctionStatus> parseLspci(std::string_view text) {
  const std::string unwrapped = unwrapPasteMarkup(text);
  std::vector<v1::PciFunctionStatus> out;
  std::optional<v1::PciFunctionStatus> cur;
  bool used = false;            // the current function holds a recognised line
  std::string command_address;  // `lspci ... -s ADDR` names the function that follows
  // AER registers of the current function: newer lspci wraps them onto lines of their own
  // ("UESta:\tDLP- ... MalfTLP-" + "\t\t\tECRC- UnsupReq- ..."), so they are gathered first.
  std::map<std::string, std::string, std::less<>> aer;
  std::string aer_key;  // the register the last line belonged to ("" when not an AER one)
  auto flush = [&] {
    if (cur && used && out.size() < kMaxPfReports) {
      finishLink(*cur);
      applyAerRegisters(*cur, aer);
      out.push_back(std::move(*cur));
    }
    cur.reset();
    used = false;
    aer.clear();
    aer_key.clear();
  };
  auto current = [&]() -> v1::PciFunctionStatus& {
    if (!cur) {
      cur.emplace();
      cur->set_address(command_address);
    }
    return *cur;
  };
  forEachLine(unwrapped, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (t.empty()) return;
    if (auto cmd = commandWords(t, {"lspci"})) {
      flush();
      command_address = argAfter(*cmd, "-s");
      return;
    }
    if (const auto header = lspciHeader(t)) {
      flush();
      cur.emplace();
      cur->set_address(cap(header->first));
      cur->set_description(cap(header->second));
      used = true;
      if (containsIgnoreCase(header->second, "(rev ff)")) {
        cur->set_config_unreadable(true);
        cur->set_unreadable_line(cap(t));
      }
      return;
    }
    // lspci's own "!!! Unknown header type 7f" (the kernel's "unknown header type" message is
    // a kernel log line, not this).
    if (startsWith(t, "!!!") && containsIgnoreCase(t, "Unknown header type")) {
      auto& f = current();
      used = true;
      f.set_unreadable_line(cap(f.unreadable_line().empty()
                                    ? std::string(t)
                                    : f.unreadable_line() + " / " + std::string(t)));
      f.set_config_unreadable(true);
      return;
    }
    const std::string_view key = lspciKey(t);
    if (key.empty()) {
      // A wrapped AER register: a line of flags only ("ECRC- UnsupReq- ACSViol-").
      const auto words = splitWhitespace(t);
      const bool flags = !words.empty() && std::all_of(words.begin(), words.end(), [](auto w) {
        return w.size() > 1 && (w.back() == '+' || w.back() == '-' || w.back() == ',');
      });
      if (!aer_key.empty() && flags && aer[aer_key].size() < 1024) {
        aer[aer_key] += " " + std::string(t);
      } else {
        aer_key.clear();
      }
      return;
    }
    aer_key.clear();
    const std::string_view values = trim(t.substr(key.size() + 1));
    if (key == "LnkCap" || key == "LnkSta") {
      used = true;
      setLink(current(), key == "LnkCap", t, values);
    } else if (key == "UESta" || key == "UEMsk" || key == "UESvrt" || key == "CESta" ||
               key == "CEMsk") {
      current();
      used = true;
      aer_key = std::string(key);
      aer[aer_key] = std::string(values.substr(0, 1024));
    }
  });
  flush();
  return out;
}

}  // namespace ibc::core
