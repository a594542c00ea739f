#include "ibc/core/launcher_prefix.h"

#include <cctype>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Parses a run of decimal digits at the start of s; nullopt when there is none or it
// overflows an int.
std::optional<int> leadingInt(std::string_view s, std::size_t* used) {
  std::size_t i = 0;
  long long v = 0;
  while (i < s.size() && isDigit(s[i])) {
    v = v * 10 + (s[i] - '0');
    if (v > 1'000'000'000) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  *used = i;
  return static_cast<int>(v);
}

}  // namespace

bool isHostnameToken(std::string_view token) {
  if (token.empty() || token.size() > 253) return false;
  bool non_digit = false;
  for (char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '.' && c != '-' && c != '_') return false;
    if (!isDigit(c)) non_digit = true;
  }
  return non_digit;
}

std::optional<HostPrefix> splitHostPrefix(std::string_view line) {
  const std::size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view token = line.substr(0, colon);
  if (!isHostnameToken(token)) return std::nullopt;
  return HostPrefix{token, line.substr(colon + 2)};
}

std::optional<RankPrefix> splitTaskLabel(std::string_view line) {
  // srun pads the label on the left when tasks have different widths ("  3: ...").
  std::string_view s = trimLeft(line);
  std::size_t used = 0;
  auto v = leadingInt(s, &used);
  if (!v || used > 7 || s.substr(used, 2) != ": ") return std::nullopt;
  return RankPrefix{*v, s.substr(used + 2)};
}

std::optional<RankPrefix> splitMpiTag(std::string_view line) {
  if (line.size() < 6 || line[0] != '[') return std::nullopt;
  std::size_t used = 0;
  std::string_view s = line.substr(1);
  if (!leadingInt(s, &used)) return std::nullopt;
  s.remove_prefix(used);
  if (s.empty() || s[0] != ',') return std::nullopt;
  s.remove_prefix(1);
  auto rank = leadingInt(s, &used);
  if (!rank) return std::nullopt;
  s.remove_prefix(used);
  if (s.empty() || s[0] != ']') return std::nullopt;
  s.remove_prefix(1);
  for (std::string_view stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (startsWith(s, stream)) {
      s.remove_prefix(stream.size());
      if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
      return RankPrefix{*rank, s};
    }
  }
  return std::nullopt;
}

std::optional<RankPrefix> splitTorchRank(std::string_view line) {
  if (!startsWith(line, "[rank")) return std::nullopt;
  std::size_t used = 0;
  auto rank = leadingInt(line.substr(5), &used);
  if (!rank) return std::nullopt;
  const std::string_view after = line.substr(5 + used);
  if (!startsWith(after, "]:")) return std::nullopt;
  return RankPrefix{*rank, after.substr(2)};
}

}  // namespace ibc::core
