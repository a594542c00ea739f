#pragma once

// Small text helpers shared by the parsers. All take and return views into the caller's
// text; nothing allocates unless it returns std::string.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibc::core {

std::string_view trim(std::string_view s);
std::string_view trimLeft(std::string_view s);
std::string_view trimRight(std::string_view s);
bool startsWith(std::string_view s, std::string_view prefix);
bool endsWith(std::string_view s, std::string_view suffix);
bool startsWithIgnoreCase(std::string_view s, std::string_view prefix);
bool containsIgnoreCase(std::string_view haystack, std::string_view needle);
std::string toLower(std::string_view s);

// Splits on '\n'; a trailing '\r' is removed from each line. A final empty line after
// the last '\n' is not returned.
std::vector<std::string_view> splitLines(std::string_view text);
// Splits on runs of spaces/tabs; no empty fields.
std::vector<std::string_view> splitWhitespace(std::string_view s);
// Splits on a single character; keeps empty fields.
std::vector<std::string_view> split(std::string_view s, char sep);

// Calls fn(line, line_number_1_based) for each line without building a vector.
template <typename Fn>
void forEachLine(std::string_view text, Fn&& fn) {
  std::size_t start = 0;
  uint32_t n = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, ++n);
    start = end + 1;
  }
}

// Leading floating-point number ("200 Gb/sec" → 200, "2.5" → 2.5, "1e-07" → 1e-07).
// nullopt when the text does not start with a number.
std::optional<double> parseLeadingDouble(std::string_view s);
// Whole-field double; nullopt unless the entire (trimmed) field is a number.
std::optional<double> parseDouble(std::string_view s);
// Whole-field signed integer.
std::optional<int64_t> parseInt(std::string_view s);

// The shortest text that reads back as exactly `v` (finite), as std::to_chars(double) writes
// it: fixed or scientific, whichever is shorter, fixed on a tie ("0.1", "1e+20", "1e-07").
std::string shortestDouble(double v);

// The C library's spelling of std::from_chars/std::to_chars for double, used where the C++
// library lacks them (GCC 10's libstdc++, the portable build: docs/operations.md) and held to
// std's by a test wherever std has them. Locale-independent.
namespace c_library {
// The number at the start of s as std::from_chars(chars_format::general) reads it: the value
// and the length read, or nullopt (no number, out of range).
std::optional<std::pair<double, std::size_t>> readDouble(std::string_view s);
std::string shortestDouble(double v);
}  // namespace c_library

// Replaces bytes that are not printable UTF-8/ASCII (invalid sequences, C0 and C1 control
// characters but tab) with '?', and caps the length, so untrusted input can be shown in
// reports, terminals and JSON safely.
std::string printable(std::string_view s, std::size_t max_len = 512);

// Keeps newlines and tabs, drops carriage returns, replaces invalid UTF-8 and other C0/C1
// control characters with '?': for multi-line raw text (logs) stored in protobuf strings
// and printed as JSON or to a terminal.
std::string sanitizeUtf8(std::string_view s);

// True when every byte sequence in s is well-formed UTF-8 (no overlong forms, surrogates or
// code points above U+10FFFF). Control characters are valid UTF-8.
bool isValidUtf8(std::string_view s);

// `text`'s words (split at spaces) on lines of at most `width` characters joined by '\n'; a
// word longer than `width` stands alone on its line. For --help descriptions.
std::string wrapWords(std::string_view text, std::size_t width);

// A number for people: an integral value exactly ("480", up to 1e15), else with at most
// `significant` significant digits ("1.25e-06", "3.14").
std::string formatNumber(double v, int significant = 4);

// A UTC time as strftime(3) `format` gives it ("%Y-%m-%dT%H:%M:%SZ", "%Y%m%dT%H%M%SZ", ...).
std::string formatUtc(std::int64_t unix_seconds, const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace ibc::core
