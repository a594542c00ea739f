#include "ibc/core/nccl_tests.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/paste.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), isDigit);
}

std::optional<uint64_t> parseDecimal(std::string_view s) {
  if (!allDigits(s) || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

std::optional<double> parseFinite(std::string_view s) {
  auto v = parseDouble(s);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

bool contains(const std::vector<std::string_view>& tokens, std::string_view t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

// Columns announced by a header line.
struct Header {
  bool present = false;
  bool has_redop = false;
  bool has_root = false;
  bool modern = false;  // "#wrong" columns (else legacy "error")
  int groups = 2;       // out-of-place and in-place
};

// "#       size         count      type   redop    root     time   algbw   busbw #wrong ...",
// also without the leading '#'.
std::optional<Header> parseHeader(std::string_view body) {
  if (body.find("busbw") == std::string_view::npos) return std::nullopt;
  if (!body.empty() && body[0] == '#') body.remove_prefix(1);
  const auto tokens = splitWhitespace(body);
  if (!contains(tokens, "size") || !contains(tokens, "count") || !contains(tokens, "type") ||
      !contains(tokens, "algbw") || !contains(tokens, "busbw")) {
    return std::nullopt;
  }
  Header h;
  h.present = true;
  h.has_redop = contains(tokens, "redop");
  h.has_root = contains(tokens, "root");
  h.modern = contains(tokens, "#wrong");
  h.groups = static_cast<int>(std::count(tokens.begin(), tokens.end(), "algbw"));
  h.groups = std::clamp(h.groups, 1, 2);
  return h;
}

// The other header lines: "out-of-place in-place" (or its cut-off tail "in-place") and the
// units line "(B) (elements) (us) (GB/s) ...".
bool isHeaderDecoration(std::string_view body) {
  const auto tokens = splitWhitespace(body);
  if (tokens.empty()) return false;
  const bool placement = std::all_of(tokens.begin(), tokens.end(), [](std::string_view t) {
    return t == "out-of-place" || t == "in-place";
  });
  return placement || (tokens[0] == "(B)" && contains(tokens, "(elements)"));
}

struct CheckValue {
  bool na = false;
  bool integer = false;
  bool asterisk = false;
  double value = 0;
};

// "#wrong"/"error" cell: "0", "3*", "2e-07", "5e-07*", "N/A".
std::optional<CheckValue> parseCheck(std::string_view s) {
  CheckValue c;
  if (!s.empty() && s.back() == '*') {
    c.asterisk = true;
    s.remove_suffix(1);
  }
  if (s == "N/A") {
    c.na = true;
    return c;
  }
  auto v = parseFinite(s);
  if (!v) return std::nullopt;
  c.value = *v;
  c.integer = allDigits(s);
  return c;
}

// A "#wrong" cell as a count; a cell that is not a sane count (negative, fractional from a
// misread legacy column, beyond int64) is clamped rather than overflowing the conversion.
int64_t wrongCount(double value) {
  if (!(value >= 0)) return -1;
  if (value >= 9.0e18) return INT64_MAX;
  return static_cast<int64_t>(value);
}

struct ParsedRow {
  v1::NcclTestsRow row;
  bool modern = false;
  bool oop_check_na = false;
};

std::optional<ParsedRow> parseRow(const std::vector<std::string_view>& t, const Header& h) {
  const int groups = h.present ? h.groups : 2;
  const std::size_t perf = static_cast<std::size_t>(groups) * 4;
  if (t.size() < 3 + perf || t.size() > 3 + perf + 2) return std::nullopt;
  const auto size = parseDecimal(t[0]);
  const auto count = parseDecimal(t[1]);
  if (!size || !count || t[2].empty() || std::isalpha(static_cast<unsigned char>(t[2][0])) == 0) {
    return std::nullopt;
  }
  ParsedRow p;
  v1::NcclTestsRow& r = p.row;
  r.set_size_bytes(*size);
  r.set_count(*count);
  r.set_type(std::string(t[2]));
  r.set_root(-1);
  r.set_oop_wrong(-1);
  r.set_ip_wrong(-1);

  const std::size_t middle = t.size() - 3 - perf;
  std::string_view redop;
  std::string_view root;
  if (h.present) {
    const std::size_t expected = (h.has_redop ? 1 : 0) + (h.has_root ? 1 : 0);
    if (middle == expected) {
      std::size_t i = 3;
      if (h.has_redop) redop = t[i++];
      if (h.has_root) root = t[i];
    } else if (middle + 1 == expected && h.has_redop) {
      // alltoall (legacy) prints an empty redop column.
      if (h.has_root) root = t[3];
    } else {
      return std::nullopt;
    }
  } else if (middle == 2) {
    redop = t[3];
    root = t[4];
  } else if (middle == 1) {
    (parseInt(t[3]) ? root : redop) = t[3];
  }
  if (!root.empty()) {
    auto v = parseInt(root);
    if (!v || *v < -1 || *v > 10'000'000) return std::nullopt;
    r.set_root(static_cast<int32_t>(*v));
  }
  if (!redop.empty()) {
    if (parseDouble(redop)) return std::nullopt;
    r.set_redop(std::string(redop));
  }

  std::optional<bool> modern;
  if (h.present) modern = h.modern;
  for (int g = 0; g < groups; ++g) {
    const std::size_t base = 3 + middle + static_cast<std::size_t>(g) * 4;
    const auto time = parseFinite(t[base]);
    const auto algbw = parseFinite(t[base + 1]);
    const auto busbw = parseFinite(t[base + 2]);
    const auto check = parseCheck(t[base + 3]);
    if (!time || !algbw || !busbw || !check) return std::nullopt;
    if (!modern && !check->na) modern = check->integer;
    if (check->asterisk) r.set_over_threshold(true);
    if (g == 0) {
      r.set_oop_time_us(*time);
      r.set_oop_algbw_gbs(*algbw);
      r.set_oop_busbw_gbs(*busbw);
      p.oop_check_na = check->na;
    } else {
      r.set_ip_time_us(*time);
      r.set_ip_algbw_gbs(*algbw);
      r.set_ip_busbw_gbs(*busbw);
    }
  }
  // Without a header and with only N/A checks, the root column tells the generations apart.
  p.modern = modern.value_or(middle == 2);
  for (int g = 0; g < groups; ++g) {
    const auto check = *parseCheck(t[3 + middle + static_cast<std::size_t>(g) * 4 + 3]);
    if (check.na) continue;
    if (p.modern) {
      const int64_t wrong = wrongCount(check.value);
      g == 0 ? r.set_oop_wrong(wrong) : r.set_ip_wrong(wrong);
    } else {
      r.set_has_error_column(true);
      g == 0 ? r.set_oop_error(check.value) : r.set_ip_error(check.value);
    }
  }
  return p;
}

// "/opt/nccl-tests/build/all_reduce_perf -b 8 ..." → "all_reduce_perf".
std::string_view perfBinaryIn(std::string_view line) {
  for (std::string_view tok : splitWhitespace(line)) {
    std::string_view base =
        tok.substr(tok.rfind('/') == std::string_view::npos ? 0 : tok.rfind('/') + 1);
    while (!base.empty() && (base.back() == '"' || base.back() == '\'' || base.back() == '`')) {
      base.remove_suffix(1);
    }
    if (base.size() > 5 && (endsWith(base, "_perf") || endsWith(base, "_perf_mpi")) &&
        std::all_of(base.begin(), base.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
        })) {
      return base;
    }
  }
  return {};
}

bool looksLikeTestsBody(std::string_view s) {
  s = trimLeft(s);
  return !s.empty() && (isDigit(s[0]) || s[0] == '#' || parseHeader(s).has_value());
}

std::string_view stripPrefixes(std::string_view line) {
  std::string_view rest = trimRight(line);
  for (int i = 0; i < 6; ++i) {
    if (auto tag = splitMpiTag(rest)) {
      rest = tag->rest;
      continue;
    }
    if (auto hp = splitHostPrefix(trimLeft(rest)); hp && looksLikeTestsBody(hp->rest)) {
      rest = hp->rest;
      continue;
    }
    // srun --label "0: " only before something table-like; a bare row starts with digits
    // but never with "N: ".
    if (auto label = splitTaskLabel(rest); label && looksLikeTestsBody(label->rest)) {
      rest = label->rest;
      continue;
    }
    break;
  }
  return trim(rest);
}

// What parseNcclTests has read so far, beside the rows it keeps in `result`.
struct TestsScan {
  v1::NcclTestsResult result;
  Header header;
  std::string footer_name;
  std::string command_name;
  std::optional<bool> format_modern;
  std::optional<bool> validation_off;
  bool all_oop_checks_na = true;
  int max_rank = -1;
  std::unordered_set<std::string> hosts;
  uint64_t unparsed = 0;
};

// "# Rank  0 Group  0 Pid 1234 on node1 device  0 [0x07] ...": the ranks and their hosts.
void readRankLine(TestsScan& s, const std::vector<std::string_view>& tokens) {
  auto r = parseInt(tokens[1]);
  if (!r || *r < 0 || *r >= 10'000'000) return;
  s.max_rank = std::max(s.max_rank, static_cast<int>(*r));
  for (std::size_t i = 2; i + 1 < tokens.size(); ++i) {
    if (tokens[i] != "on") continue;
    std::string host = printable(tokens[i + 1], 256);
    if (s.hosts.insert(host).second) s.result.add_hosts(host);
    break;
  }
}

// "Out of bounds values : 0 OK".
void readOutOfBounds(TestsScan& s, std::string_view c) {
  const std::size_t colon = c.find(':');
  const auto rest = splitWhitespace(colon == std::string_view::npos ? "" : c.substr(colon + 1));
  if (rest.empty()) return;
  if (auto n = parseDecimal(rest[0])) {
    s.result.set_has_out_of_bounds(true);
    s.result.set_out_of_bounds(*n);
    s.result.set_out_of_bounds_ok(rest.size() > 1 ? rest[1] == "OK" : *n == 0);
  }
}

// "Avg bus bandwidth    : 1.23".
void readAvgBusbw(TestsScan& s, std::string_view c) {
  const std::size_t colon = c.find(':');
  if (colon == std::string_view::npos) return;
  const auto rest = splitWhitespace(c.substr(colon + 1));
  if (rest.empty()) return;
  if (auto v = parseFinite(rest[0])) {
    s.result.set_has_avg_busbw(true);
    s.result.set_avg_busbw_gbs(*v);
  }
}

// A comment or footer line, without its '#'.
void readCommentLine(TestsScan& s, std::string_view c) {
  const auto tokens = splitWhitespace(c);
  if (tokens.size() >= 2 && tokens[0] == "Rank") {
    readRankLine(s, tokens);
  } else if (startsWith(c, "nThread") || c.find("validation:") != std::string_view::npos) {
    if (const std::size_t v = c.find("validation:"); v != std::string_view::npos) {
      if (auto n = parseLeadingDouble(c.substr(v + 11))) s.validation_off = *n == 0;
    }
  } else if (startsWith(c, "Out of bounds values")) {
    readOutOfBounds(s, c);
  } else if (startsWith(c, "Avg bus bandwidth")) {
    readAvgBusbw(s, c);
  } else if (startsWith(c, "Collective test concluded:") ||
             startsWith(c, "Collective test starting:")) {
    if (s.footer_name.empty()) {
      s.footer_name = printable(trim(c.substr(c.find(':') + 1)), 128);
    }
  }
}

// One line without its prefixes: a header, a comment or footer, a row, the command line, or
// not ours.
void readTestsLine(TestsScan& s, std::string_view body, const NcclTestsOptions& options) {
  if (auto h = parseHeader(body)) {
    s.header = *h;
    s.format_modern = h->modern;
    return;
  }
  // Older nccl-tests (and some wrappers) print the footer without '#':
  // " Out of bounds values : 0 OK", " Avg bus bandwidth    : 1.23".
  const bool bare_footer =
      startsWith(body, "Out of bounds values") || startsWith(body, "Avg bus bandwidth");
  if (body[0] == '#' || bare_footer) {
    readCommentLine(s, bare_footer ? body : trim(body.substr(1)));
    return;
  }
  if (isHeaderDecoration(body)) return;
  const auto tokens = splitWhitespace(body);
  if (auto row = parseRow(tokens, s.header)) {
    if (static_cast<std::size_t>(s.result.rows_size()) >= options.max_rows) {
      ++s.unparsed;
      return;
    }
    if (!s.format_modern) s.format_modern = row->modern;
    s.all_oop_checks_na = s.all_oop_checks_na && row->oop_check_na;
    *s.result.add_rows() = std::move(row->row);
    return;
  }
  if (std::string_view name = perfBinaryIn(body); !name.empty()) {
    if (s.command_name.empty()) s.command_name = std::string(name);
    return;
  }
  ++s.unparsed;
}

}  // namespace

v1::NcclTestsResult parseNcclTests(std::string_view pasted, const NcclTestsOptions& options) {
  const std::string text = pasteText(pasted);
  TestsScan s;
  s.result.set_nranks(-1);
  forEachLine(text, [&](std::string_view line, uint32_t) {
    const std::string_view body = stripPrefixes(line);
    if (!body.empty()) readTestsLine(s, body, options);
  });

  v1::NcclTestsResult& result = s.result;
  result.set_test_name(!s.footer_name.empty() ? s.footer_name : s.command_name);
  if (s.max_rank >= 0) result.set_nranks(s.max_rank + 1);
  if (s.format_modern) result.set_format(*s.format_modern ? "modern" : "legacy");
  if (s.validation_off) {
    result.set_validation_off(*s.validation_off);
  } else {
    result.set_validation_off(result.rows_size() > 0 && s.all_oop_checks_na);
  }
  result.set_lines_unparsed(s.unparsed);
  return std::move(s.result);
}

}  // namespace ibc::core
