#pragma once

// The agent's and the collector's config files (docs/security.md, docs/operations.md): the same
// keys as the long flags, one `key = value` per line. Both programs read them through this one
// parser so a mistake is reported the same way: FILE:LINE, the key, and what would be valid.

#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"

namespace ibc::core {

struct ConfigEntry {
  std::string key;
  std::string value;
  int line = 0;  // 1-based
};

// Parses `text` (the content of `file`, which is named in errors). Accepted:
//   key = value        key = "value with spaces"     key: value   (YAML habit, same meaning)
//   # comment          ; comment                     value   # trailing comment
// Blank lines are skipped; a key may appear once. Refused, each with
// "FILE:LINE: ..." in the message: a key not in `valid_keys` (the message lists them), a
// [section] header, a line without `=` or `:`, a key given twice, an unterminated quote.
// Errors: InvalidArgument.
Result<std::vector<ConfigEntry>> parseConfigFile(std::string_view text, std::string_view file,
                                                 const std::vector<std::string>& valid_keys);

}  // namespace ibc::core
