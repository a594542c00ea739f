// `ip link show` of PFs with their VF tables (pf_tools.h parsePfIpLink).

#include "ibc/core/pf/pf_tools.h"

#include <cctype>
#include <optional>
#include <string>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::cap;
using pf::parseCount;

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

}  // namespace ibc::core
