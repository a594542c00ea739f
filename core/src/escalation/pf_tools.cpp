// PF-side tool parsers (pf_tools.h). Shapes follow mstflint's mlxlink (MlxlinkUi /
// MlxlinkCmdPrint: "Title\n-----\nKey   : value"), mlxconfig's query table, flint's
// "Key:   value" query and ethtool's sff-8472/8636 dumpers ("\t%-41s : %s"); the real
// captures in tests/fixtures/real/pf/ are the reference.

#include "ibc/core/pf_tools.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>

#include "ibc/core/kernel_log.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"

namespace ibc::core {

namespace {

std::string cap(std::string_view s) { return printable(s, 512); }

bool isDashes(std::string_view t) {
  return t.size() >= 3 && std::all_of(t.begin(), t.end(), [](char c) { return c == '-'; });
}

// "Key : value" / "Key: value". The key holds no ':' and starts with a letter.
struct Field {
  std::string_view key;
  std::string_view value;
  bool space_before_colon = false;
};
std::optional<Field> splitField(std::string_view line) {
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

bool isNa(std::string_view v) {
  return v.empty() || startsWithIgnoreCase(v, "N/A") || v == "NA" || v == "-";
}

// A value with the paster's annotation after it ("12  <-- rising", "On <== here"): the value
// alone. ("# comment" tails are already gone: unwrapPasteMarkup.)
std::string_view withoutAnnotation(std::string_view v) {
  for (std::string_view arrow : {"<--", "<==", "<-", "\xe2\x86\x90" /* ← */}) {
    if (const auto at = v.find(arrow); at != std::string_view::npos) v = v.substr(0, at);
  }
  return trim(v);
}

// The argument after `flag` in a command line ("-d /dev/mst/mt4115_pciconf0").
std::string argAfter(const std::vector<std::string_view>& words, std::string_view flag) {
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == flag) return cap(words[i + 1]);
  }
  return {};
}

// A shell line that runs `tool` (after any prompt): the words from the tool on.
std::optional<std::vector<std::string_view>> commandWords(
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
std::optional<std::vector<double>> numberList(std::string_view v) {
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

std::optional<uint64_t> parseCount(std::string_view v) {
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

// "15E-255", "3E-12", "1.5E-08": strtod handles them; an exponent below the double range is 0.
std::optional<double> parseBer(std::string_view v) {
  const auto words = splitWhitespace(v);
  if (words.empty()) return std::nullopt;
  return parseDouble(words[0]);
}

// ---- mlxlink ------------------------------------------------------------------------------

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

}  // namespace

namespace {

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

// ---- mlxconfig ------------------------------------------------------------------------------

namespace {

bool isConfigName(std::string_view w) {
  if (!w.empty() && w.front() == '*') w.remove_prefix(1);  // modified values are starred
  if (w.size() < 3) return false;
  bool upper = false;
  for (char c : w) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      upper = true;
    } else if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '[' || c == ']')) {
      return false;
    }
  }
  return upper;
}

}  // namespace

std::vector<v1::MlxconfigReport> parseMlxconfig(std::string_view text) {
  const std::string unwrapped = unwrapPasteMarkup(text);
  std::vector<v1::MlxconfigReport> out;
  std::optional<v1::MlxconfigReport> cur;
  bool in_config = false;
  bool used = false;
  auto flush = [&] {
    if (cur && used && out.size() < kMaxPfReports) out.push_back(std::move(*cur));
    cur.reset();
    used = false;
    in_config = false;
  };
  forEachLine(unwrapped, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (t.empty() || isDashes(t)) return;
    if (auto cmd = commandWords(t, {"mlxconfig"})) {
      flush();
      cur.emplace();
      cur->set_device(argAfter(*cmd, "-d"));
      return;
    }
    if (startsWith(t, "Device #")) {
      if (used) flush();
      return;
    }
    if (const auto f = splitField(t)) {
      if (f->key == "Device type") {
        if (!cur) cur.emplace();
        cur->set_device_type(cap(f->value));
        return;
      }
      if (f->key == "Device" && cur) {
        cur->set_device(cap(f->value));
        return;
      }
      if (f->key == "Configurations") {
        if (!cur) cur.emplace();
        in_config = true;
        return;
      }
    }
    const auto words = splitWhitespace(t);
    if (words.size() < 2 || !isConfigName(words[0])) {
      if (in_config && used) flush();
      return;
    }
    std::string_view name = words[0];
    if (name.front() == '*') name.remove_prefix(1);
    const bool always =
        name == "SRIOV_EN" || name == "NUM_OF_VFS" || startsWith(name, "LINK_TYPE_P");
    if (!in_config && !always) return;
    if (!cur) cur.emplace();
    // "SRIOV_EN   True(1)" or with Default/Current/Next Boot columns: the last is next boot.
    const std::string value = cap(words[words.size() - 1]);
    if (static_cast<std::size_t>(cur->settings_size()) < kMaxPfFields) {
      auto* s = cur->add_settings();
      s->set_key(cap(name));
      std::string all;
      for (std::size_t w = 1; w < words.size(); ++w)
        all += (w > 1 ? " " : "") + std::string(words[w]);
      s->set_value(cap(all));
    }
    if (name == "SRIOV_EN") cur->set_sriov_en(value);
    if (name == "NUM_OF_VFS") cur->set_num_of_vfs(value);
    if (startsWith(name, "LINK_TYPE_P")) {
      auto* lt = cur->add_link_types();
      lt->set_key(cap(name));
      lt->set_value(value);
    }
    used = true;
  });
  flush();
  return out;
}

// ---- flint --------------------------------------------------------------------------------

std::vector<v1::FlintQuery> parseFlintQuery(std::string_view text) {
  const std::string unwrapped = unwrapPasteMarkup(text);
  std::vector<v1::FlintQuery> out;
  std::optional<v1::FlintQuery> cur;
  std::string pending_device;
  auto flush = [&] {
    if (cur && (!cur->fw_version().empty() || !cur->psid().empty()) && out.size() < kMaxPfReports)
      out.push_back(std::move(*cur));
    cur.reset();
  };
  forEachLine(unwrapped, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (auto cmd = commandWords(t, {"flint", "mstflint"})) {
      flush();
      pending_device = argAfter(*cmd, "-d");
      return;
    }
    const auto f = splitField(t);
    if (!f || f->space_before_colon) return;
    const std::string_view k = f->key;
    const auto first = [&] {
      const auto w = splitWhitespace(f->value);
      return w.empty() ? std::string() : cap(w[0]);
    };
    auto open = [&] {
      if (!cur) {
        cur.emplace();
        cur->set_device(pending_device);
        pending_device.clear();
      }
    };
    if (k == "Image type") {
      if (cur && !cur->image_type().empty()) flush();
      open();
      cur->set_image_type(cap(f->value));
    } else if (k == "FW Version") {
      if (isNa(f->value)) return;
      if (cur && !cur->fw_version().empty()) flush();
      open();
      cur->set_fw_version(first());
    } else if (k == "FW Release Date" && cur) {
      cur->set_fw_release_date(first());
    } else if (k == "Product Version" && cur) {
      cur->set_product_version(first());
    } else if (k == "PSID") {
      open();
      cur->set_psid(first());
    } else if (k == "Base GUID" && cur) {
      cur->set_base_guid(first());
    } else if (k == "Base MAC" && cur) {
      cur->set_base_mac(first());
    } else if (k == "Description" && cur) {
      cur->set_description(cap(f->value));
    }
  });
  flush();
  return out;
}

// ---- ethtool -m ---------------------------------------------------------------------------

namespace {

// "0.5734 mW / -2.42 dBm" → -2.42; "-inf dBm" → nullopt.
std::optional<double> dbmOf(std::string_view v) {
  const auto slash = v.find('/');
  std::string_view part = slash == std::string_view::npos ? v : v.substr(slash + 1);
  part = trim(part);
  if (!endsWith(part, "dBm")) return std::nullopt;
  return parseLeadingDouble(part);
}

// A mail stored quoted-printable breaks long lines with a trailing '=' ("185.0=" + "0 degrees
// F"): the logical line is the two joined without it. ethtool never ends a value with '='.
std::string joinSoftLineBreaks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  forEachLine(text, [&](std::string_view line, uint32_t) {
    const std::string_view t = trimRight(line);
    if (t.size() > 1 && t.back() == '=' && t[t.size() - 2] != '=') {
      out.append(t.substr(0, t.size() - 1));
      return;
    }
    out.append(line);
    out.push_back('\n');
  });
  return out;
}

}  // namespace

std::vector<v1::ModuleDiagnostics> parseEthtoolModule(std::string_view text) {
  const std::string unwrapped = joinSoftLineBreaks(unwrapPasteMarkup(text));
  std::vector<v1::ModuleDiagnostics> out;
  std::optional<v1::ModuleDiagnostics> cur;
  std::string pending_netdev;
  // Lines of a module that are not "Key : value": a value the mail client or terminal wrapped
  // ("85.82" / "degrees F"), an elision the poster wrote ("(...)"). Two in a row end it.
  int stray = 0;
  auto flush = [&] {
    if (cur && out.size() < kMaxPfReports) out.push_back(std::move(*cur));
    cur.reset();
    stray = 0;
  };
  forEachLine(unwrapped, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (auto cmd = commandWords(t, {"ethtool"})) {
      const auto& w = *cmd;
      for (std::size_t i = 1; i + 1 < w.size(); ++i) {
        if (w[i] == "-m" || w[i] == "--module-info" || w[i] == "--dump-module-eeprom") {
          flush();
          pending_netdev = cap(w[i + 1]);
        }
      }
      return;
    }
    const auto f = splitField(t);
    if (!f) {
      if (cur && !t.empty() && ++stray >= 2) flush();
      return;
    }
    stray = 0;
    const std::string_view k = f->key;
    const std::string_view v = withoutAnnotation(f->value);
    if (k == "Identifier" && startsWith(v, "0x")) {
      flush();
      cur.emplace();
      cur->set_netdev(pending_netdev);
      pending_netdev.clear();
      cur->set_identifier(cap(v));
    }
    if (!cur) return;
    if (static_cast<std::size_t>(cur->fields_size()) < kMaxPfFields) {
      auto* field = cur->add_fields();
      field->set_key(cap(k));
      field->set_value(cap(v));
    }
    const std::string lk = toLower(k);
    if (lk.find("threshold") != std::string::npos) return;
    if (lk == "transceiver type") cur->set_transceiver_type(cap(v));
    if (lk == "vendor name") cur->set_vendor_name(cap(v));
    if (lk == "vendor pn") cur->set_vendor_pn(cap(v));
    if (lk == "vendor sn") cur->set_vendor_sn(cap(v));
    if (lk == "module temperature") {
      if (auto d = parseLeadingDouble(v)) cur->set_temperature_c(*d);
    }
    if (lk == "module voltage") {
      if (auto d = parseLeadingDouble(v)) cur->set_voltage_v(*d);
    }
    const bool flag =
        lk.find("alarm") != std::string::npos || lk.find("warning") != std::string::npos;
    if (flag && lk != "alarm/warning flags implemented") {
      cur->set_flags_reported(cur->flags_reported() + 1);
      if (startsWithIgnoreCase(v, "On")) {
        if (lk.find("alarm") != std::string::npos) {
          if (cur->alarms_on_size() < 64) cur->add_alarms_on(cap(k));
        } else if (cur->warnings_on_size() < 64) {
          cur->add_warnings_on(cap(k));
        }
      }
      return;
    }
    // SFP: "Laser bias current", "Laser output power", "Receiver signal average optical
    // power"; QSFP: "Laser tx bias current (Channel 1)", "Transmit avg optical power (Channel
    // 1)", "Rcvr signal avg optical power(Channel 1)"; CMIS: "Laser tx bias current (Lane 1)".
    if (lk.find("bias current") != std::string::npos) {
      if (auto d = parseLeadingDouble(v)) cur->add_bias_current_ma(*d);
    } else if (startsWith(lk, "laser output power") ||
               startsWith(lk, "transmit avg optical power")) {
      if (auto d = dbmOf(v)) cur->add_tx_power_dbm(*d);
    } else if (startsWith(lk, "receiver signal average optical power") ||
               startsWith(lk, "rcvr signal avg optical power") ||
               startsWith(lk, "receiver signal avg optical power")) {
      if (auto d = dbmOf(v)) cur->add_rx_power_dbm(*d);
    }
  });
  flush();
  return out;
}

// ---- ip link of a PF ------------------------------------------------------------------------

namespace {

// "[N: ]name[@parent]: <FLAGS> rest".
bool pfLinkHeader(std::string_view t, v1::PfNetdevLink& link) {
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i > 0) {
    if (i + 1 >= t.size() || t[i] != ':' || t[i + 1] != ' ') return false;
    t = trimLeft(t.substr(i + 1));
  }
  const auto colon = t.find(": <");
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view name = t.substr(0, colon);
  if (name.find_first_of(" \t:") != std::string_view::npos) return false;
  name = name.substr(0, name.find('@'));
  if (name.empty()) return false;
  const std::string_view rest = t.substr(colon + 2);
  const auto close = rest.find('>');
  if (close == std::string_view::npos) return false;
  link.set_name(cap(name));
  const std::string_view flags = rest.substr(1, close - 1);
  link.set_flags_raw(cap(flags));
  bool up = false;
  for (auto flag : split(flags, ',')) {
    if (flag == "UP") up = true;
    if (flag == "LOWER_UP") link.set_carrier(true);
    if (flag == "NO-CARRIER") link.set_carrier(false);
  }
  link.set_admin_up(up);
  const auto words = splitWhitespace(rest.substr(close + 1));
  for (std::size_t w = 0; w + 1 < words.size(); ++w) {
    if (words[w] == "state") link.set_state(cap(words[w + 1]));
    if (words[w] == "qdisc") link.set_qdisc(cap(words[w + 1]));
  }
  return true;
}

std::string_view stripBold(std::string_view t) {
  while (startsWith(t, "**")) t.remove_prefix(2);
  while (endsWith(t, "**")) t.remove_suffix(2);
  return trim(t);
}

// "vf 12 ..." → 12.
std::optional<uint32_t> vfIndex(std::string_view t) {
  if (!startsWith(t, "vf ")) return std::nullopt;
  const auto words = splitWhitespace(t);
  if (words.size() < 2) return std::nullopt;
  const auto n = parseCount(words[1]);
  if (!n || *n > 65535) return std::nullopt;
  return static_cast<uint32_t>(*n);
}

bool looksLikeVfContinuation(std::string_view t) {
  return startsWith(t, "spoof checking") || startsWith(t, "link-state") ||
         startsWith(t, "NODE_GUID") || startsWith(t, "PORT_GUID") || startsWith(t, "trust ") ||
         startsWith(t, "vlan ") || startsWith(t, "query_rss") || startsWith(t, "RX:") ||
         startsWith(t, "TX:");
}

// The word after `key` in a comma-separated VF record ("NODE_GUID 22:44:.." → "22:44:..").
std::string attribute(std::string_view record, std::string_view key) {
  std::size_t pos = 0;
  while ((pos = record.find(key, pos)) != std::string_view::npos) {
    // The key must start the record or follow ", " / a space.
    if (pos == 0 || record[pos - 1] == ' ' || record[pos - 1] == ',') {
      std::string_view rest = trimLeft(record.substr(pos + key.size()));
      const auto end = rest.find_first_of(", \t");
      return cap(rest.substr(0, end));
    }
    pos += key.size();
  }
  return {};
}

void applyVfRecord(std::string_view record, v1::PfVfEntry& vf) {
  vf.set_raw(cap(record));
  std::string mac = attribute(record, "MAC ");
  if (mac.empty()) mac = attribute(record, "link/ether ");
  vf.set_mac(mac);
  vf.set_node_guid(attribute(record, "NODE_GUID "));
  vf.set_port_guid(attribute(record, "PORT_GUID "));
  vf.set_link_state(attribute(record, "link-state "));
  vf.set_vlan(attribute(record, "vlan "));
  vf.set_spoof_checking(attribute(record, "spoof checking "));
  vf.set_trust(attribute(record, "trust "));
}

}  // namespace

std::vector<v1::PfNetdevLink> parsePfIpLink(std::string_view text) {
  const std::string unwrapped = unwrapPasteMarkup(text);
  std::vector<v1::PfNetdevLink> out;
  std::optional<v1::PfNetdevLink> cur;
  std::string record;  // the VF record being assembled
  std::optional<uint32_t> record_index;
  auto endRecord = [&] {
    if (cur && record_index && static_cast<std::size_t>(cur->vfs_size()) < kMaxPfVfs) {
      auto* vf = cur->add_vfs();
      vf->set_index(*record_index);
      applyVfRecord(record, *vf);
    }
    record.clear();
    record_index.reset();
  };
  auto flush = [&] {
    endRecord();
    if (cur && out.size() < kMaxPfReports) out.push_back(std::move(*cur));
    cur.reset();
  };
  forEachLine(unwrapped, [&](std::string_view line, uint32_t) {
    const std::string_view t = stripBold(trim(line));
    if (t.empty()) return;
    v1::PfNetdevLink header;
    if (pfLinkHeader(t, header)) {
      flush();
      cur = std::move(header);
      return;
    }
    if (!cur) return;
    if (const auto index = vfIndex(t)) {
      endRecord();
      record_index = index;
      record = std::string(
          trimLeft(t.substr(t.find(' ', 3) == std::string_view::npos ? t.size() : t.find(' ', 3))));
      return;
    }
    if (record_index && looksLikeVfContinuation(t)) {
      record += " " + std::string(t);
      return;
    }
    if (startsWith(t, "link/")) {
      endRecord();
      const auto words = splitWhitespace(t);
      cur->set_link_type(cap(words[0].substr(5)));
      if (words.size() > 1) cur->set_address(cap(words[1]));
      return;
    }
    // Statistics, alt names, `ip -d` details belong to the netdev; a line that is none of
    // these (another command's output) ends it.
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      endRecord();
      return;
    }
    flush();
  });
  flush();
  return out;
}

// ---- AER -----------------------------------------------------------------------------------

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

// ---- kernel log ----------------------------------------------------------------------------

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

// ---- lspci ---------------------------------------------------------------------------------

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

// ---- the whole paste -----------------------------------------------------------------------

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

}  // namespace ibc::core
