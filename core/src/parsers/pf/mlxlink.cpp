// mlxlink/mstlink output (pf_tools.h parseMlxlink): one report per port shown.

#include "ibc/core/pf/pf_tools.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::argAfter;
using pf::cap;
using pf::commandWords;
using pf::Field;
using pf::isDashes;
using pf::isNa;
using pf::numberList;
using pf::parseCount;
using pf::splitField;
using pf::withoutAnnotation;

namespace {

// "15E-255", "3E-12", "1.5E-08": strtod handles them; an exponent below the double range is 0.
std::optional<double> parseBer(std::string_view v) {
  const auto words = splitWhitespace(v);
  if (words.empty()) return std::nullopt;
  return parseDouble(words[0]);
}

constexpr std::array<std::string_view, 12> kMlxlinkSections{
    {"Operational Info", "Supported Info", "Troubleshooting Info", "Tool Information",
     "Module Info", "Physical Counters and BER Info", "EYE Opening Info", "Port Info",
     "Test Mode Info", "Histogram of FEC Errors", "FEC Capability Info", "Physical Counters"}};

bool isMlxlinkSectionTitle(std::string_view t) {
  for (auto s : kMlxlinkSections) {
    if (t.size() == s.size() && startsWithIgnoreCase(t, s)) return true;
  }
  return false;
}

// Keys only mlxlink prints: one of them outside a section still says "this is mlxlink".
bool isMlxlinkKey(std::string_view key) {
  static constexpr std::array<std::string_view, 12> keys{
      {"Physical state", "Effective Physical Errors", "Effective Physical BER", "Raw Physical BER",
       "Raw Physical Errors Per Lane", "Link Down Counter", "Link Error Recovery Counter",
       "Status Opcode", "Recommendation", "Physical Grade", "Time Since Last Clear [Min]",
       "Loopback Mode"}};
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool flagSet(std::string_view value) {
  if (isNa(value)) return false;
  if (const auto list = numberList(value)) {
    return std::any_of(list->begin(), list->end(), [](double d) { return d != 0; });
  }
  const std::string v = toLower(trim(value));
  return v == "yes" || v == "on" || v == "true" || v == "asserted";
}

// The link and error fields of mlxlink's report (`k` its key, `v` its value); false when `k`
// is none of them.
bool applyMlxlinkLinkField(v1::MlxlinkReport& r, std::string_view k, std::string_view v) {
  if (k == "State") {
    r.set_state(cap(v));
  } else if (k == "Physical state") {
    r.set_phys_state(cap(v));
  } else if (k == "Speed") {
    r.set_speed(cap(v));
  } else if (k == "Width") {
    r.set_width(cap(v));
  } else if (k == "FEC") {
    r.set_fec(cap(v));
  } else if (k == "Status Opcode") {
    r.set_status_opcode(cap(v));
  } else if (k == "Recommendation") {
    r.set_recommendation(cap(v));
  } else if (k == "Firmware Version") {
    r.set_firmware_version(cap(v));
  } else if (k == "Time Since Last Clear [Min]") {
    if (auto d = parseDouble(v)) r.set_time_since_clear_min(*d);
  } else if (k == "Effective Physical Errors") {
    if (auto n = parseCount(v)) r.set_effective_errors(*n);
  } else if (k == "Effective Physical BER") {
    r.set_effective_ber(cap(v));
    if (auto d = parseBer(v)) r.set_effective_ber_value(*d);
  } else if (k == "Raw Physical BER") {
    r.set_raw_ber(cap(v));
    if (auto d = parseBer(v)) r.set_raw_ber_value(*d);
  } else if (k == "Raw Physical Errors Per Lane") {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_raw_errors_per_lane(d < 0 ? 0 : static_cast<uint64_t>(d));
    }
  } else if (k == "Link Down Counter") {
    if (auto n = parseCount(v)) r.set_link_down_counter(*n);
  } else if (k == "Link Error Recovery Counter") {
    if (auto n = parseCount(v)) r.set_link_error_recovery_counter(*n);
  } else if (k == "Symbol Errors") {
    if (auto n = parseCount(v)) r.set_symbol_errors(*n);
  } else {
    return false;
  }
  return true;
}

// The module fields (identity, DDM, eye) and its fault and alarm flags.
void applyMlxlinkModuleField(v1::MlxlinkReport& r, std::string_view section, std::string_view k,
                             std::string_view v) {
  const bool module = startsWithIgnoreCase(section, "Module");
  if (k == "Identifier") {
    r.set_module_identifier(cap(v));
  } else if (k == "Cable Type") {
    r.set_cable_type(cap(v));
  } else if (k == "Vendor Name") {
    r.set_vendor_name(cap(v));
  } else if (k == "Vendor Part Number") {
    r.set_vendor_part_number(cap(v));
  } else if (k == "Vendor Serial Number") {
    r.set_vendor_serial_number(cap(v));
  } else if (k == "Digital Diagnostic Monitoring") {
    r.set_ddm(cap(v));
  } else if (startsWith(k, "Temperature [C]") || (module && k == "Temperature")) {
    if (!isNa(v)) {
      if (auto d = parseLeadingDouble(v)) r.set_temperature_c(*d);
    }
  } else if (startsWith(k, "Voltage [mV]")) {
    if (!isNa(v)) {
      if (auto d = parseLeadingDouble(v)) r.set_voltage_mv(*d);
    }
  } else if (startsWith(k, "Rx Power Current")) {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_rx_power_dbm(d);
    }
  } else if (startsWith(k, "Tx Power Current")) {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_tx_power_dbm(d);
    }
  } else if (startsWith(k, "Bias Current")) {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_bias_current_ma(d);
    }
  } else if (k == "Physical Grade") {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_physical_grade(static_cast<int64_t>(d));
    }
  } else if (startsWith(k, "Height Eye Opening")) {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_height_eye_mv(static_cast<int64_t>(d));
    }
  } else if (startsWith(k, "Phase Eye Opening")) {
    if (auto list = numberList(v)) {
      for (double d : *list) r.add_phase_eye_psec(static_cast<int64_t>(d));
    }
  }
  // Module fault and alarm flags: "Tx Fault [per lane]", "Rx LOS [per lane]", "Rx CDR LOL",
  // "Module FW Fault", "LOS Alarm", "Tx Adaptive EQ Fault".
  if (module &&
      (k.find("Fault") != std::string_view::npos || k.find("LOS") != std::string_view::npos ||
       k.find("LOL") != std::string_view::npos || k.find("Alarm") != std::string_view::npos) &&
      flagSet(v) && r.faults_size() < 64) {
    auto* flag = r.add_faults();
    flag->set_section(cap(section));
    flag->set_key(cap(k));
    flag->set_value(cap(v));
  }
}

void applyMlxlinkField(v1::MlxlinkReport& r, std::string_view section, const Field& f) {
  if (static_cast<std::size_t>(r.fields_size()) < kMaxPfFields) {
    auto* field = r.add_fields();
    field->set_section(cap(section));
    field->set_key(cap(f.key));
    field->set_value(cap(f.value));
  }
  const std::string_view v = withoutAnnotation(f.value);
  if (!applyMlxlinkLinkField(r, f.key, v)) applyMlxlinkModuleField(r, section, f.key, v);
}

// Next non-blank line after position i, or npos.
std::size_t nextNonBlank(const std::vector<std::string_view>& lines, std::size_t i) {
  for (std::size_t j = i + 1; j < lines.size(); ++j) {
    if (!trim(lines[j]).empty()) return j;
  }
  return std::string_view::npos;
}

// mlxlink colours values on a terminal ("\x1b[32mActive\x1b[0m"); a paste may keep them.
std::string stripAnsi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == ';')) ++j;
      if (j < s.size() && s[j] == 'm') {
        i = j;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::vector<v1::MlxlinkReport> parseMlxlink(std::string_view text) {
  const std::string unwrapped = unwrapPasteMarkup(stripAnsi(text));
  const auto lines = splitLines(unwrapped);
  std::vector<v1::MlxlinkReport> out;
  std::optional<v1::MlxlinkReport> cur;
  bool cur_used = false;  // the current report holds a field
  std::string section;
  bool in_mlxlink = false;  // inside mlxlink output (a command or a section was seen)
  auto flush = [&] {
    if (cur && cur_used && out.size() < kMaxPfReports) out.push_back(std::move(*cur));
    cur.reset();
    cur_used = false;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = trim(lines[i]);
    if (t.empty() || isDashes(t)) continue;
    if (auto cmd = commandWords(t, {"mlxlink", "mstlink"})) {
      flush();
      cur.emplace();
      cur->set_device(argAfter(*cmd, "-d"));
      if (auto p = parseCount(argAfter(*cmd, "-p")); p && *p < 1000) {
        cur->set_port(static_cast<uint32_t>(*p));
      }
      in_mlxlink = true;
      section.clear();
      continue;
    }
    const std::size_t next = nextNonBlank(lines, i);
    const bool dashed = next != std::string_view::npos && isDashes(trim(lines[next]));
    if (t.find(':') == std::string_view::npos &&
        (isMlxlinkSectionTitle(t) || (dashed && in_mlxlink))) {
      if (startsWithIgnoreCase(t, "Operational Info") && cur && !cur->state().empty()) flush();
      section = std::string(t);
      in_mlxlink = true;
      if (!cur) cur.emplace();
      continue;
    }
    const auto f = splitField(t);
    if (!f) {
      // Another tool's text ends the mlxlink output.
      if (cur_used) {
        flush();
        in_mlxlink = false;
        section.clear();
      }
      continue;
    }
    if (!in_mlxlink && !isMlxlinkKey(f->key)) continue;
    if (!in_mlxlink) in_mlxlink = true;
    if (!cur) cur.emplace();
    applyMlxlinkField(*cur, section, *f);
    cur_used = true;
  }
  flush();
  return out;
}

}  // namespace ibc::core
