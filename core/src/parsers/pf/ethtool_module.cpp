// `ethtool -m` decoded module EEPROM (pf_tools.h parseEthtoolModule).

#include "ibc/core/pf/pf_tools.h"

#include <optional>
#include <string>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::cap;
using pf::commandWords;
using pf::splitField;
using pf::withoutAnnotation;

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

}  // namespace ibc::core
