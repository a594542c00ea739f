#include "ibc/core/text.h"

#include <locale.h>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace ibc::core {

namespace {
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
}  // namespace

std::string_view trimLeft(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) { return trimRight(trimLeft(s)); }

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool startsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(s[i]) != lower(prefix[i])) return false;
  }
  return true;
}

bool containsIgnoreCase(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  if (haystack.size() < needle.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (lower(haystack[i]) == lower(needle[0]) &&
        startsWithIgnoreCase(haystack.substr(i), needle)) {
      return true;
    }
  }
  return false;
}

std::string toLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  forEachLine(text, [&](std::string_view line, uint32_t) { lines.push_back(line); });
  return lines;
}

std::vector<std::string_view> splitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

namespace c_library {
namespace {
// The C locale, so that no conversion follows the program's locale (Qt sets the user's: a
// console under de_DE would write and read "1,5").
locale_t cLocale() {
  static const locale_t c = ::newlocale(LC_ALL_MASK, "C", locale_t{});
  return c;
}

bool isNumberChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '+' ||
         c == '(' || c == ')' || c == '_';
}
}  // namespace

std::optional<std::pair<double, std::size_t>> readDouble(std::string_view s) {
  // from_chars takes no leading space or '+', and reads "0x1p3" as 0 (no hex in general).
  const std::size_t sign = !s.empty() && s.front() == '-' ? 1 : 0;
  if (s.size() <= sign || s[sign] == '+' || isSpace(s[sign]) || s[sign] == '-') return std::nullopt;
  if (s.size() > sign + 1 && s[sign] == '0' && (s[sign + 1] == 'x' || s[sign + 1] == 'X'))
    return std::pair{sign ? -0.0 : 0.0, sign + 1};
  std::size_t n = 0;
  while (n < s.size() && isNumberChar(s[n])) ++n;
  const std::string token(s.substr(0, n));
  char* end = nullptr;
  errno = 0;
  const double v = ::strtod_l(token.c_str(), &end, cLocale());
  if (end == token.c_str()) return std::nullopt;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
  return std::pair{v, static_cast<std::size_t>(end - token.c_str())};
}

std::string shortestDouble(double v) {
  // The fewest significant digits that read back as v; %.*e rounds correctly, so the first
  // precision that round-trips gives the digits std::to_chars chooses.
  char buf[48];
  const locale_t previous = ::uselocale(cLocale());
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, v);
    if (::strtod_l(buf, nullptr, cLocale()) == v) break;
  }
  ::uselocale(previous);
  std::string_view text(buf);
  const bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e))
    if (c != '.') digits += c;
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  const int count = static_cast<int>(digits.size());

  std::string scientific = digits.substr(0, 1);
  if (count > 1) scientific += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  scientific += exp;

  std::string fixed;
  if (exponent >= count - 1) {
    // An integer: std writes its exact digits (as printf's %f), not the shortest ones padded
    // with zeros; both have the same length.
    char integer[320];
    const locale_t before = ::uselocale(cLocale());
    std::snprintf(integer, sizeof integer, "%.0f", std::fabs(v));
    ::uselocale(before);
    fixed = integer;
  } else if (exponent >= 0) {
    fixed = digits.substr(0, static_cast<std::size_t>(exponent + 1)) + "." +
            digits.substr(static_cast<std::size_t>(exponent + 1));
  } else {
    fixed = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  }
  const std::string& chosen = scientific.size() < fixed.size() ? scientific : fixed;
  return negative ? "-" + chosen : chosen;
}
}  // namespace c_library

namespace {
std::optional<std::pair<double, std::size_t>> readDoubleAtStart(std::string_view s) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return std::pair{v, static_cast<std::size_t>(p - s.data())};
#else
  return c_library::readDouble(s);
#endif
}
}  // namespace

std::string shortestDouble(double v) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
#else
  return c_library::shortestDouble(v);
#endif
}

std::optional<double> parseLeadingDouble(std::string_view s) {
  s = trimLeft(s);
  if (s.empty()) return std::nullopt;
  const auto read = readDoubleAtStart(s);
  if (!read) return std::nullopt;
  return read->first;
}

std::optional<double> parseDouble(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  const auto read = readDoubleAtStart(s);
  if (!read || read->second != s.size()) return std::nullopt;
  return read->first;
}

std::optional<int64_t> parseInt(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  if (s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

namespace {
// Length of a well-formed UTF-8 sequence starting at s[i] (2-4), or 0.
std::size_t utf8SequenceLength(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = 0;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4;
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  // Reject overlong 3-byte forms and surrogates, which protobuf's validator refuses.
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xe0 && c1 < 0xa0) return 0;
  if (c == 0xed && c1 >= 0xa0) return 0;
  if (c == 0xf0 && c1 < 0x90) return 0;
  if (c == 0xf4 && c1 >= 0x90) return 0;
  return len;
}

// U+0080..U+009F: C1 control characters (CSI among them), which some terminals obey.
bool isC1Control(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xc2 && i + 1 < s.size() &&
         static_cast<unsigned char>(s[i + 1]) < 0xa0;
}

// Copies the well-formed UTF-8 sequence at s[i] that is no C1 control to `out`, or a '?' for
// the bad byte (or sequence) there; returns where the next character starts.
std::size_t copyCharacterOrMark(std::string_view s, std::size_t i, std::string& out) {
  const std::size_t len = utf8SequenceLength(s, i);
  if (len > 0 && !isC1Control(s, i)) {
    out.append(s.substr(i, len));
  } else {
    out.push_back('?');
  }
  return i + (len > 0 ? len : 1);
}
}  // namespace

std::string sanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    i = c == '\r' ? i + 1 : copyCharacterOrMark(s, i, out);
  }
  return out;
}

bool isValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
    } else if (const std::size_t len = utf8SequenceLength(s, i); len > 0) {
      i += len;
    } else {
      return false;
    }
  }
  return true;
}

std::string printable(std::string_view s, std::size_t max_len) {
  std::string out;
  out.reserve(std::min(s.size(), max_len));
  std::size_t i = 0;
  while (i < s.size() && out.size() < max_len) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    // Accept well-formed multi-byte UTF-8 sequences, replace everything else.
    i = copyCharacterOrMark(s, i, out);
  }
  if (i < s.size()) out += "...";
  return out;
}

std::string wrapWords(std::string_view text, std::size_t width) {
  std::string out, line;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = text.find(' ', i);
    if (j == std::string_view::npos) j = text.size();
    const std::string_view word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  return out + line;
}

std::string formatNumber(double v, int significant) {
  char buf[64];
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  }
  return buf;
}

std::string formatUtc(std::int64_t unix_seconds, const char* format) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

}  // namespace ibc::core
