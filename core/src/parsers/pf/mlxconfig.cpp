// `mlxconfig q` output (pf_tools.h parseMlxconfig).

#include "ibc/core/pf/pf_tools.h"

#include <cctype>
#include <optional>
#include <string>

#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "pf_internal.h"

namespace ibc::core {

// The shared reading of a pasted line (pf_internal.h).
using pf::argAfter;
using pf::cap;
using pf::commandWords;
using pf::isDashes;
using pf::splitField;

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

}  // namespace ibc::core
