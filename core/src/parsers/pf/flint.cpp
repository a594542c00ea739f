// `flint|mstflint q` output (pf_tools.h parseFlintQuery).

#include "ibc/core/pf/pf_tools.h"

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
using pf::isNa;
using pf::splitField;

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

}  // namespace ibc::core
