#include "ibc/core/config_file.h"

#include <algorithm>
#include <set>

namespace ibc::core {

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string joined(const std::vector<std::string>& keys) {
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& k : sorted) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

Result<std::vector<ConfigEntry>> parseConfigFile(std::string_view text, std::string_view file,
                                                 const std::vector<std::string>& valid_keys) {
  std::vector<ConfigEntry> out;
  std::set<std::string> seen;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trimmed(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    const auto where = [&] { return std::string(file) + ":" + std::to_string(line_no) + ": "; };
    if (line.empty() || line.front() == '#' || line.front() == ';') {
      if (end == text.size()) break;
      continue;
    }
    if (line.front() == '[') {
      return Error{ErrorCode::InvalidArgument, where() + "sections are not used here (" +
                                                   std::string(line) +
                                                   "); write every key at the top level"};
    }
    const std::size_t eq = line.find('=');
    const std::size_t colon = line.find(':');
    const std::size_t sep = std::min(eq, colon);
    if (sep == std::string_view::npos ||
        trimmed(line.substr(0, sep)).find_first_of(" \t") != std::string_view::npos) {
      return Error{ErrorCode::InvalidArgument,
                   where() + "expected `key = value`, got '" + std::string(line) + "'"};
    }
    std::string key(trimmed(line.substr(0, sep)));
    if (key.size() > 2 && key.compare(0, 2, "--") == 0) key.erase(0, 2);  // "--listen = x"
    if (std::find(valid_keys.begin(), valid_keys.end(), key) == valid_keys.end()) {
      return Error{ErrorCode::InvalidArgument,
                   where() + "unknown key '" + key + "' (valid keys: " + joined(valid_keys) + ")"};
    }
    std::string_view raw = trimmed(line.substr(sep + 1));
    std::string value;
    if (!raw.empty() && (raw.front() == '"' || raw.front() == '\'')) {
      const char quote = raw.front();
      const std::size_t close = raw.find(quote, 1);
      if (close == std::string_view::npos) {
        return Error{ErrorCode::InvalidArgument,
                     where() + key + ": the quoted value is not closed (add " + quote + ")"};
      }
      value = std::string(raw.substr(1, close - 1));
      std::string_view rest = trimmed(raw.substr(close + 1));
      if (!rest.empty() && rest.front() != '#' && rest.front() != ';') {
        return Error{ErrorCode::InvalidArgument, where() + key +
                                                     ": unexpected text after the quoted value: '" +
                                                     std::string(rest) + "'"};
      }
    } else {
      // A comment after an unquoted value starts at " #" (a '#' inside a path stays).
      std::size_t hash = raw.find(" #");
      if (hash == std::string_view::npos) hash = raw.find("\t#");
      value = std::string(trimmed(raw.substr(0, hash)));
    }
    if (!seen.insert(key).second) {
      return Error{ErrorCode::InvalidArgument,
                   where() + key + " is given twice; keep one line for it"};
    }
    out.push_back({key, std::move(value), line_no});
    if (end == text.size()) break;
  }
  return out;
}

}  // namespace ibc::core
