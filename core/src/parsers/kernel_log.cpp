#include "ibc/core/kernel_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <deque>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/paste.h"
#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

constexpr std::size_t kMaxTextBytes = 1024;
// Mail clients and commit messages wrap near 72-78 columns; a stamped line this long that is
// followed by an unstamped one was most likely cut there.
constexpr std::size_t kWrapColumn = 64;
// A wrapped kernel line seldom spans more than three physical lines.
constexpr int kMaxContinuations = 3;
// Classification only needs the start of a message; this bounds the lower-casing work on
// pathological lines.
constexpr std::size_t kMaxClassifyBytes = 4096;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

struct LineParts {
  std::string_view message;
  std::string_view timestamp;
  double monotonic = 0;
  std::string_view host;
};

// "[   5.376443]" at the start of s: returns the length including ']' and the seconds.
std::size_t matchMonotonic(std::string_view s, double* seconds) {
  if (s.empty() || s[0] != '[') return 0;
  std::size_t i = 1;
  while (i < s.size() && s[i] == ' ') ++i;
  const std::size_t num_start = i;
  while (i < s.size() && isDigit(s[i])) ++i;
  if (i == num_start || i >= s.size() || s[i] != '.') return 0;
  ++i;
  const std::size_t frac_start = i;
  while (i < s.size() && isDigit(s[i])) ++i;
  if (i == frac_start || i >= s.size() || s[i] != ']') return 0;
  if (auto v = parseDouble(s.substr(num_start, i - num_start))) *seconds = *v;
  return i + 1;
}

bool isOneOf(std::string_view word, std::initializer_list<std::string_view> list) {
  for (auto w : list) {
    if (word == w) return true;
  }
  return false;
}

bool isWeekday(std::string_view w) {
  return isOneOf(w, {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"});
}
bool isMonth(std::string_view w) {
  return isOneOf(
      w, {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"});
}

// dmesg -T: "[Mon Jun  2 10:11:12 2025]".
std::size_t matchHumanTime(std::string_view s) {
  if (s.size() < 20 || s[0] != '[' || !isWeekday(s.substr(1, 3)) || s[4] != ' ' ||
      !isMonth(s.substr(5, 3))) {
    return 0;
  }
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return 0;
  return close + 1;
}

// "HH:MM:SS" with optional ".ffffff" at the start of s; returns its length.
std::size_t matchClock(std::string_view s) {
  if (s.size() < 8 || !isDigit(s[0]) || !isDigit(s[1]) || s[2] != ':' || !isDigit(s[3]) ||
      !isDigit(s[4]) || s[5] != ':' || !isDigit(s[6]) || !isDigit(s[7])) {
    return 0;
  }
  std::size_t i = 8;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && isDigit(s[i])) ++i;
  }
  return i;
}

// syslog/journal short: "Feb 06 16:10:07" or "Feb  6 16:10:07.123456"; returns its length.
std::size_t matchSyslogTime(std::string_view s) {
  if (s.size() < 15 || !isMonth(s.substr(0, 3)) || s[3] != ' ') return 0;
  std::size_t i = 4;
  if (s[i] == ' ') ++i;
  const std::size_t day_start = i;
  while (i < s.size() && isDigit(s[i]) && i - day_start < 2) ++i;
  if (i == day_start || i >= s.size() || s[i] != ' ') return 0;
  ++i;
  const std::size_t clock = matchClock(s.substr(i));
  return clock == 0 ? 0 : i + clock;
}

// ISO 8601 token "2025-02-06T16:10:07+0000", "2025-06-02T10:11:12,123456+00:00"; returns the
// token length (up to the next space).
std::size_t matchIsoTime(std::string_view s) {
  if (s.size() < 19 || !isDigit(s[0]) || !isDigit(s[1]) || !isDigit(s[2]) || !isDigit(s[3]) ||
      s[4] != '-' || !isDigit(s[5]) || !isDigit(s[6]) || s[7] != '-' || !isDigit(s[8]) ||
      !isDigit(s[9]) || (s[10] != 'T' && s[10] != ' ') || matchClock(s.substr(11)) == 0) {
    return 0;
  }
  std::size_t i = 11;
  while (i < s.size() && s[i] != ' ') ++i;
  return i;
}

// dmesg -x: "kern  :err   : "; returns the length including the trailing space.
std::size_t matchDecoded(std::string_view s) {
  const std::size_t c1 = s.find(':');
  if (c1 == std::string_view::npos || c1 > 10) return 0;
  const std::string_view facility = trim(s.substr(0, c1));
  if (!isOneOf(facility, {"kern",   "user",   "mail",   "daemon",   "auth",   "syslog", "lpr",
                          "news",   "uucp",   "cron",   "authpriv", "ftp",    "local0", "local1",
                          "local2", "local3", "local4", "local5",   "local6", "local7"})) {
    return 0;
  }
  const std::size_t c2 = s.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 - c1 > 10) return 0;
  const std::string_view level = trim(s.substr(c1 + 1, c2 - c1 - 1));
  if (!isOneOf(level, {"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"})) {
    return 0;
  }
  std::size_t end = c2 + 1;
  if (end < s.size() && s[end] == ' ') ++end;
  return end;
}

// "<3>"; returns the length.
std::size_t matchPriority(std::string_view s) {
  if (s.size() < 3 || s[0] != '<' || !isDigit(s[1])) return 0;
  std::size_t i = 1;
  while (i < s.size() && isDigit(s[i]) && i < 5) ++i;
  return i < s.size() && s[i] == '>' ? i + 1 : 0;
}

bool startsWithKernelTimestamp(std::string_view s) {
  double ignored = 0;
  return matchMonotonic(s, &ignored) > 0 || matchHumanTime(s) > 0 || matchPriority(s) > 0 ||
         matchDecoded(s) > 0 || matchSyslogTime(s) > 0 || matchIsoTime(s) > 0;
}

// After a journal/syslog time: "HOST IDENT: msg". Strips "HOST kernel: " (or
// "kernel[123]: "); other identifiers stay in the message so the line keeps saying which
// program wrote it.
void splitJournalHost(std::string_view rest, LineParts* parts) {
  rest = trimLeft(rest);
  const std::size_t sp = rest.find(' ');
  if (sp == std::string_view::npos) {
    parts->message = rest;
    return;
  }
  const std::string_view host = rest.substr(0, sp);
  std::string_view after = rest.substr(sp + 1);
  const std::size_t colon = after.find(": ");
  const std::size_t space = after.find(' ');
  if (colon == std::string_view::npos || (space != std::string_view::npos && space < colon)) {
    // "HOST msg" without an identifier is not a journal line; keep everything.
    parts->message = rest;
    return;
  }
  parts->host = host;
  const std::string_view ident = after.substr(0, colon);
  if (ident == "kernel" || (startsWith(ident, "kernel[") && endsWith(ident, "]"))) {
    after.remove_prefix(colon + 2);
  }
  parts->message = after;
}

std::string_view withoutQuote(std::string_view line);

LineParts splitKernelLine(std::string_view line) {
  LineParts parts;
  std::string_view rest = line;
  // pdsh/clush host prefixes, possibly nested ("h: h: [ts] msg").
  for (int i = 0; i < 4; ++i) {
    auto hp = splitHostPrefix(rest);
    if (!hp) break;
    auto next = splitHostPrefix(hp->rest);
    if (!startsWithKernelTimestamp(hp->rest) && !(next && next->host == hp->host)) break;
    parts.host = hp->host;
    rest = hp->rest;
  }
  if (std::size_t n = matchPriority(rest)) rest.remove_prefix(n);
  if (std::size_t n = matchDecoded(rest)) rest.remove_prefix(n);

  bool journal = false;
  if (std::size_t n = matchMonotonic(rest, &parts.monotonic)) {
    parts.timestamp = rest.substr(0, n);
    rest.remove_prefix(n);
  } else if (std::size_t h = matchHumanTime(rest)) {
    parts.timestamp = rest.substr(0, h);
    rest.remove_prefix(h);
  } else if (std::size_t s = matchSyslogTime(rest)) {
    parts.timestamp = rest.substr(0, s);
    rest.remove_prefix(s);
    journal = true;
  } else if (std::size_t iso = matchIsoTime(rest)) {
    parts.timestamp = rest.substr(0, iso);
    rest.remove_prefix(iso);
    // journalctl -o short-iso has "HOST kernel:" next; dmesg --time-format=iso does not.
    const std::string_view after = trimLeft(rest);
    const std::size_t sp = after.find(' ');
    if (sp != std::string_view::npos) {
      const std::string_view ident = after.substr(sp + 1);
      const std::size_t colon = ident.find(": ");
      const std::size_t space = ident.find(' ');
      journal = colon != std::string_view::npos &&
                (space == std::string_view::npos || colon < space) &&
                (startsWith(ident, "kernel:") || startsWith(ident, "kernel["));
    }
  }
  if (journal) {
    const std::string_view host_before = parts.host;
    splitJournalHost(rest, &parts);
    if (parts.host.empty()) parts.host = host_before;
    rest = parts.message;
    // A program that relayed dmesg ("collect[42]: [  12.3] mlx5_core ..."): the kernel's
    // line is after its name.
    if (const std::size_t colon = rest.find(": ");
        colon != std::string_view::npos && colon < 64 &&
        rest.substr(0, colon).find(' ') == std::string_view::npos &&
        startsWithKernelTimestamp(rest.substr(colon + 2))) {
      rest.remove_prefix(colon + 2);
    }
  }
  // A logger's stamp in front of the kernel's own ("2024-05-01T12:00:00Z [  12.3] ...",
  // kern.log's "kernel: [  12.3] ..."): the kernel's stamp goes too, its seconds kept.
  if (!parts.timestamp.empty() && parts.monotonic == 0) {
    std::string_view inner = withoutQuote(trimLeft(rest));  // a quote behind the stamp
    if (std::size_t p = matchPriority(inner)) inner.remove_prefix(p);
    double mono = 0;
    if (std::size_t n = matchMonotonic(inner, &mono)) {
      parts.monotonic = mono;
      rest = inner.substr(n);
    }
  }
  parts.message = trim(rest);
  return parts;
}

void fillLine(v1::KernelLogLine* out, const LineParts& parts, uint32_t line_number) {
  out->set_text(printable(parts.message, kMaxTextBytes));
  out->set_timestamp(std::string(parts.timestamp));
  out->set_monotonic_seconds(parts.monotonic);
  out->set_host(printable(parts.host, 256));
  out->set_line_number(line_number);
}

bool isBlank(std::string_view line) { return trim(line).empty(); }

// Occurrence of `needle` in the lower-cased `hay` that does not continue a word on the left
// (and, with right_word, is not followed by a letter).
bool containsWord(std::string_view hay, std::string_view needle, bool right_word) {
  std::size_t pos = 0;
  while ((pos = hay.find(needle, pos)) != std::string_view::npos) {
    const bool left_ok = pos == 0 || !isAlnum(hay[pos - 1]);
    const std::size_t end = pos + needle.size();
    const bool right_ok = !right_word || end >= hay.size() || !isAlpha(hay[end]);
    if (left_ok && right_ok) return true;
    ++pos;
  }
  return false;
}

// IPoIB netdevs: "ib0", "ibp65s0", "ibs85f0".
bool containsIpoibNetdev(std::string_view hay) {
  std::size_t pos = 0;
  while ((pos = hay.find("ib", pos)) != std::string_view::npos) {
    const bool left_ok = pos == 0 || !isAlnum(hay[pos - 1]);
    std::size_t i = pos + 2;
    if (i < hay.size() && (hay[i] == 'p' || hay[i] == 's')) ++i;
    if (left_ok && i < hay.size() && isDigit(hay[i])) return true;
    ++pos;
  }
  return false;
}

bool isPciAddress(std::string_view s) {
  // dddd:bb:dd.f
  if (s.size() != 12) return false;
  for (std::size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u}) {
    if (!isHex(s[i])) return false;
  }
  return s[4] == ':' && s[7] == ':' && s[10] == '.' && s[11] >= '0' && s[11] <= '7';
}

std::string_view findPciAddress(std::string_view s) {
  for (std::size_t i = 0; i + 12 <= s.size(); ++i) {
    if (s[i + 4] == ':' && isPciAddress(s.substr(i, 12)) && (i == 0 || !isHex(s[i - 1]))) {
      return s.substr(i, 12);
    }
  }
  return {};
}

// Interface names: lower-case letters, digits, '.', '-', '@'; start with a letter, contain
// a digit, at most 15 bytes (IFNAMSIZ - 1). Module names ("mlx4_en", "rdma_rxe") have '_'.
bool isNetdevName(std::string_view s) {
  if (s.size() < 2 || s.size() > 15 || !(s[0] >= 'a' && s[0] <= 'z')) return false;
  bool digit = false;
  for (char c : s) {
    if (isDigit(c)) {
      digit = true;
    } else if (!((c >= 'a' && c <= 'z') || c == '.' || c == '-' || c == '@')) {
      return false;
    }
  }
  return digit;
}

bool isRdmaDeviceName(std::string_view s) {
  for (std::string_view p : {"mlx4_", "mlx5_", "rxe", "irdma", "bnxt_re", "efa_", "hfi1_", "qib",
                             "siw", "i40iw", "rocep", "mana_ib", "erdma", "hns_"}) {
    if (startsWith(s, p) && s.size() > p.size()) return true;
  }
  return false;
}

// Lower-cased message names an RDMA driver or device.
bool mentionsRdmaDriver(std::string_view m) {
  for (std::string_view n :
       {"mlx4", "mlx5", "ib_", "infiniband", "rdma", "hfi1", "irdma", "bnxt_re", "qib", "i40iw"}) {
    if (containsWord(m, n, false)) return true;
  }
  return containsWord(m, "efa", true) || containsWord(m, "rxe", true);
}

// ---- pasted logs: quotes and wrapped lines --------------------------------------------------

// A markdown or mail quote ("> ", "> > ", ">>") is the paste's, never the kernel's.
std::string_view withoutQuote(std::string_view line) {
  std::string_view t = trimLeft(line);
  bool quoted = false;
  while (!t.empty() && t.front() == '>') {
    t.remove_prefix(1);
    if (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    quoted = true;
  }
  return quoted ? t : line;
}

// The physical line was cut by whoever pasted it, so the next unstamped line holds its rest:
// a quoted-printable soft break (a trailing '='), a line cut at a mail or terminal column, or
// a message that stops where no kernel message ends (after ':', ',' or an open parenthesis).
bool looksCut(std::string_view line) {
  const std::string_view t = trimRight(line);
  if (t.empty()) return false;
  if (t.size() >= kWrapColumn) return true;
  const char last = t.back();
  if (last == '=' || last == ':' || last == ',') return true;
  return std::count(t.begin(), t.end(), '(') > std::count(t.begin(), t.end(), ')');
}

// The stamp a logger put in front of a line, with the host and program a syslog line names
// ("2024-05-01T12:00:00Z ", "Nov 20 08:15:02 gpu07 collect[42]: "); 0 when there is none.
std::size_t loggerStampLength(std::string_view line) {
  const std::string_view t = trimLeft(line);
  const std::size_t lead = line.size() - t.size();
  if (const std::size_t iso = matchIsoTime(t); iso > 0 && iso < t.size() && t[iso] == ' ')
    return lead + iso + 1;
  const std::size_t sys = matchSyslogTime(t);
  if (sys == 0) return 0;
  const std::size_t host_end = t.find(' ', sys + 1);
  if (host_end == std::string_view::npos) return 0;
  const std::size_t colon = t.find(": ", host_end + 1);
  if (colon == std::string_view::npos ||
      t.substr(host_end + 1, colon - host_end - 1).find(' ') != std::string_view::npos)
    return 0;
  return lead + colon + 2;
}

bool kernelStampAt(std::string_view s) {
  double ignored = 0;
  s = trimLeft(s);
  if (const std::size_t p = matchPriority(s)) s.remove_prefix(p);
  return matchMonotonic(s, &ignored) > 0 || matchHumanTime(s) > 0;
}

// Lines a program relayed with its own stamp on every one ("ISO [  12.3] msg"), some of which
// hold no kernel stamp behind it: those are pieces of a cut line, and their logger stamp is
// the relay's, not a new message's. Empty when the text is no such relay.
std::vector<bool> relayedContinuations(std::string_view text) {
  std::size_t lines = 0, stamped = 0, inner = 0;
  std::vector<bool> piece;
  forEachLine(text, [&](std::string_view raw, uint32_t) {
    const std::string_view line = withoutQuote(raw);
    const std::size_t n = isBlank(line) ? 0 : loggerStampLength(line);
    const bool has_inner = n > 0 && kernelStampAt(withoutQuote(line.substr(n)));
    piece.push_back(n > 0 && !has_inner);
    lines += isBlank(line) ? 0 : 1;
    stamped += n > 0 ? 1 : 0;
    inner += has_inner ? 1 : 0;
  });
  // Nearly every line stamped (a prompt or a header line may not be), most with the kernel's
  // stamp behind the logger's, and some without: the pieces.
  if (lines == 0 || stamped * 10 < lines * 9 || inner * 2 < stamped || inner == stamped) return {};
  return piece;
}

// Calls fn(line, first_line_number) once per logical kernel line: quotes stripped, blank lines
// skipped, and the unstamped lines that continue a cut stamped line joined to it (at most
// kMaxContinuations of them, without the soft break's '=', with one space otherwise). A log
// without any timestamps is left line by line: there is nothing to tell a wrap from a message.
template <typename Fn>
void forEachLogicalLine(std::string_view text, Fn&& fn) {
  std::string pending;
  uint32_t pending_number = 0;
  int continuations = 0;
  bool pending_cut = false;
  auto flush = [&] {
    if (!pending.empty()) fn(std::string_view(pending), pending_number);
    pending.clear();
    continuations = 0;
    pending_cut = false;
  };
  const std::vector<bool> relayed_piece = relayedContinuations(text);
  forEachLine(text, [&](std::string_view raw, uint32_t n) {
    std::string_view line = withoutQuote(raw);
    if (isBlank(line)) {
      flush();
      return;
    }
    if (n - 1 < relayed_piece.size() && relayed_piece[n - 1])
      line = withoutQuote(line.substr(loggerStampLength(line)));
    const std::string_view body = trimRight(line);
    if (!pending.empty() && pending_cut && continuations < kMaxContinuations &&
        !startsWithKernelTimestamp(trimLeft(line)) && pending.size() < kMaxTextBytes) {
      if (pending.back() == '=') {
        pending.pop_back();
      } else {
        pending.push_back(' ');
      }
      pending.append(trim(body));
      ++continuations;
      pending_cut = looksCut(body);
      return;
    }
    flush();
    pending.assign(body);
    pending_number = n;
    pending_cut = startsWithKernelTimestamp(trimLeft(line)) && looksCut(body);
  });
  flush();
}

}  // namespace

namespace {
// The kernel log's own time formats (dmesg, -T, syslog, journal) are read by this parser;
// `word: ` at a line's start is usually a driver's name.
PasteOptions kernelPaste() {
  PasteOptions o;
  o.timestamps = false;
  o.host_prefix = false;
  return o;
}
}  // namespace

std::vector<v1::KernelLogLine> parseKernelLogText(std::string_view pasted) {
  std::vector<v1::KernelLogLine> out;
  const std::string text = pasteText(pasted, kernelPaste());
  forEachLogicalLine(text, [&](std::string_view line, uint32_t n) {
    fillLine(&out.emplace_back(), splitKernelLine(line), n);
  });
  return out;
}

std::optional<v1::KernelLogLine> parseKmsgRecord(std::string_view record) {
  const std::size_t semi = record.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  const auto fields = split(record.substr(0, semi), ',');
  if (fields.size() < 3) return std::nullopt;
  const auto priority = parseUnsigned(fields[0]);
  const auto sequence = parseUnsigned(fields[1]);
  const auto usec = parseUnsigned(fields[2]);
  if (!priority || !sequence || !usec || fields[0].empty() || !isDigit(fields[0][0]) ||
      !isDigit(fields[2][0])) {
    return std::nullopt;
  }
  std::string_view message = record.substr(semi + 1);
  if (const std::size_t nl = message.find('\n'); nl != std::string_view::npos) {
    message = message.substr(0, nl);
  }
  std::array<char, 48> ts{};
  std::snprintf(ts.data(), ts.size(), "[%5llu.%06llu]",
                static_cast<unsigned long long>(*usec / 1000000),
                static_cast<unsigned long long>(*usec % 1000000));
  v1::KernelLogLine line;
  line.set_text(printable(trimRight(message), kMaxTextBytes));
  line.set_timestamp(ts.data());
  line.set_monotonic_seconds(static_cast<double>(*usec) / 1e6);
  return line;
}

bool isRdmaRelevant(std::string_view message) {
  const std::string m = toLower(message.substr(0, kMaxClassifyBytes));
  if (m.find("modules linked in") != std::string::npos) return false;
  struct Needle {
    std::string_view text;
    bool right_word;
  };
  static constexpr Needle kNeedles[] = {
      {"mlx4", false},
      {"mlx5", false},
      {"infiniband", false},
      {"rdma", false},
      {"ib_", false},
      {"ipoib", false},
      {"roce", false},
      {"rxe", true},
      {"irdma", false},
      {"bnxt_re", false},
      {"efa", true},
      {"hfi1", false},
      {"qib", true},
      {"i40iw", false},
      {"siw", true},
      {"pcie", false},
      {"pcieport", false},
      {"aer", true},
      {"link is", false},
      {"link down", false},
      {"link up", false},
      {"link becomes ready", false},
      {"netdev watchdog", false},
      {"transmit queue", false},
      {"tx timeout", false},
      {"temperature", false},
      {"temprature", false},
      {"cable", false},
      {"module event", false},
      {"catastrophic", false},
      {"health compromised", false},
      {"fw status", false},
      {"probe of", false},
  };
  for (const auto& n : kNeedles) {
    if (containsWord(m, n.text, n.right_word)) return true;
  }
  return containsIpoibNetdev(m);
}

KernelEvent classifyKernelMessage(std::string_view message) {
  const std::string m = toLower(message.substr(0, kMaxClassifyBytes));
  auto has = [&m](std::string_view needle) { return m.find(needle) != std::string::npos; };
  if (has("modules linked in")) return KernelEvent::None;

  // PCI core / mlx5 main.c: "mlx5_core: probe of 0000:01:00.0 failed with error -22",
  // "mlx5_load_one failed with error code -22", "handle_hca_cap failed".
  if ((has("probe of ") && has("failed with error")) || has("load_one failed") ||
      has("init_one failed") || has("handle_hca_cap failed") ||
      (has("failed to initialize") && mentionsRdmaDriver(m))) {
    return KernelEvent::DriverLoadFailed;
  }
  // mlx5 cmd.c: "wait_func:1189:(pid 72061): ACCESS_REG(0x805) timeout. Will cause a leak of
  // a command resource", "... No done completion", "cmd exec timeout"; mlx4 cmd.c:
  // "command 0x%x timed out (go bit not cleared)", "Communication channel command 0x%x
  // timed out".
  if (has("timeout. will cause a leak") || has("no done completion") || has("cmd exec timeout") ||
      has("completion arrived after timeout") || has("go bit not cleared") ||
      has("out of queue timeout") || (has("command 0x") && has("timed out")) ||
      (has("wait_func") && has("timeout")) ||
      // The command EQ's recovery after a lost completion: "cmd[0]: CREATE_MKEY(0x200)
      // recovered after timeout", "mlx5_cmd_eq_recover:...: Recovered 1 EQEs on cmd_eq".
      has("recovered after timeout") || (has("recovered") && has("eqes on cmd_eq"))) {
    return KernelEvent::FwCommandTimeout;
  }
  // mlx4 cmd.c: "command 0x5a failed: fw status = 0x2"; mlx5 cmd.c: "CREATE_QP(0x500)
  // op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x...)".
  if ((has("command 0x") && has("failed: fw status")) ||
      (has("op_mod(0x") && has("failed, status")) || (has("failed, status") && has("syndrome"))) {
    return KernelEvent::FwCommandFailed;
  }
  // net/sched/sch_generic.c: "NETDEV WATCHDOG: eth1 (mlx4_core): transmit queue 0 timed
  // out"; mlx5e/mlx4_en "TX timeout on queue: ...", "TX timeout detected".
  if (has("netdev watchdog") || has("tx timeout") || (has("transmit queue") && has("timed out"))) {
    return KernelEvent::TxTimeout;
  }
  // drivers/pci/pci.c pcie_report_downtraining(): only the "limited by" form is degraded.
  if (has("available pcie bandwidth, limited by")) return KernelEvent::PcieBandwidthLimited;
  // drivers/pci/pcie/aer.c: "AER: Corrected error received: 0000:41:00.0", "PCIe Bus Error:
  // severity=...", "device [15b3:101b] error status/mask=...".
  if (containsWord(m, "aer:", false) || has("pcie bus error") || has("error status/mask") ||
      has("pci_err_detected") || has("pcie error")) {
    return KernelEvent::PcieError;
  }
  // mlx5 events.c: "High temperature on sensors with bit set ...", "Port module
  // event[error]: module 0, Cable error, High Temperature"; health.c "High temprature".
  if (has("high temperature") || has("high temprature") ||
      (has("temperature") &&
       (has("over") || has("exceed") || has("critical") || has("threshold") || has("warning")))) {
    return KernelEvent::ModuleTemperature;
  }
  // mlx5 health.c / mlx4 catas.c. The generic words only count on RDMA driver lines.
  if (has("health compromised") || has("enter_error_state") ||
      has("system error event triggered") ||
      ((has("catastrophic") || has("unrecoverable") || has("enter error state") ||
        has("internal error detected") || has("fatal error") ||
        has("device is going to be reset") || has("firmware internal error")) &&
       mentionsRdmaDriver(m))) {
    return KernelEvent::DeviceFatal;
  }
  if (has("port module event[error]") || has("cable error")) return KernelEvent::ModuleError;
  if (has("cable unplugged")) return KernelEvent::CableUnplugged;
  // drivers/infiniband/sw/rxe: "rdma_rxe: Failed sending ack", "Failed sending RDMA reply".
  if (has("failed sending")) return KernelEvent::RdmaSendFailure;
  // net/ipv6/addrconf.c: "ADDRCONF(NETDEV_UP): ens1f0: link is not ready".
  if (has("link is not ready")) return KernelEvent::LinkNotReady;
  if (has("link down") || has("link is down")) return KernelEvent::LinkDown;
  if (has("link up") || has("link is up") || has("link becomes ready")) return KernelEvent::LinkUp;
  return KernelEvent::None;
}

std::string_view kernelEventName(KernelEvent event) {
  switch (event) {
    case KernelEvent::None: return "None";
    case KernelEvent::LinkDown: return "LinkDown";
    case KernelEvent::LinkUp: return "LinkUp";
    case KernelEvent::LinkNotReady: return "LinkNotReady";
    case KernelEvent::CableUnplugged: return "CableUnplugged";
    case KernelEvent::ModuleError: return "ModuleError";
    case KernelEvent::ModuleTemperature: return "ModuleTemperature";
    case KernelEvent::FwCommandTimeout: return "FwCommandTimeout";
    case KernelEvent::FwCommandFailed: return "FwCommandFailed";
    case KernelEvent::DeviceFatal: return "DeviceFatal";
    case KernelEvent::TxTimeout: return "TxTimeout";
    case KernelEvent::DriverLoadFailed: return "DriverLoadFailed";
    case KernelEvent::PcieError: return "PcieError";
    case KernelEvent::PcieBandwidthLimited: return "PcieBandwidthLimited";
    case KernelEvent::RdmaSendFailure: return "RdmaSendFailure";
  }
  return "None";
}

bool isKernelFault(KernelEvent event) {
  return event != KernelEvent::None && event != KernelEvent::LinkUp;
}

KernelMessageSubject kernelMessageSubjectOf(std::string_view message) {
  KernelMessageSubject subject;
  const std::string_view s = trim(message);
  auto setName = [&subject](std::string_view name) {
    if (isRdmaDeviceName(name)) {
      if (subject.rdma_device.empty()) subject.rdma_device = std::string(name);
    } else if (isNetdevName(name) && subject.netdev.empty()) {
      subject.netdev = std::string(name);
    }
  };

  // net/sched/sch_generic.c (older kernels): "NETDEV WATCHDOG: eth1 (mlx4_core): ...".
  if (startsWith(s, "NETDEV WATCHDOG: ")) {
    const std::string_view rest = s.substr(17);
    const std::string_view name = rest.substr(0, rest.find(' '));
    if (isNetdevName(name)) subject.netdev = std::string(name);
  }
  // net/ipv6/addrconf.c: "IPv6: ADDRCONF(NETDEV_UP): ens1f0: link is not ready".
  if (const std::size_t a = s.find("ADDRCONF("); a != std::string_view::npos) {
    const std::size_t close = s.find("): ", a);
    if (close != std::string_view::npos) {
      const std::string_view rest = s.substr(close + 3);
      const std::string_view name = rest.substr(0, rest.find(':'));
      if (isNetdevName(name)) subject.netdev = std::string(name);
    }
  }

  // dev_printk: "DRIVER BUSID[ NAME]: msg" — "mlx5_core 0000:01:00.0: ...",
  // "mlx5_core 0000:08:00.0 eth1: ...", "infiniband rxe0: ...", "pcieport 0000:00:01.0: ...".
  const std::size_t sp = s.find(' ');
  const std::string_view first = s.substr(0, sp);
  if (sp != std::string_view::npos && !first.empty() && first.back() != ':') {
    std::string_view rest = s.substr(sp + 1);
    const std::size_t colon = rest.find(": ");
    const std::string_view head = colon == std::string_view::npos ? "" : rest.substr(0, colon);
    const std::size_t inner = head.find(' ');
    const std::string_view bus = head.substr(0, inner);
    if (isPciAddress(bus)) {
      subject.pci_address = std::string(bus);
      if (inner != std::string_view::npos) setName(head.substr(inner + 1));
    } else if ((first == "infiniband" || first == "net") && inner == std::string_view::npos &&
               !head.empty()) {
      if (first == "infiniband") {
        subject.rdma_device = std::string(head);
      } else {
        setName(head);
      }
    }
  }
  // "mlx4_en: eth0: Link Up", "bond0: Releasing backup interface ens1f0".
  if (subject.netdev.empty() && subject.rdma_device.empty()) {
    std::string_view rest = s;
    for (int i = 0; i < 2; ++i) {
      const std::size_t colon = rest.find(": ");
      if (colon == std::string_view::npos) break;
      const std::string_view word = rest.substr(0, colon);
      if (word.find(' ') != std::string_view::npos) break;
      if (isNetdevName(word)) {
        subject.netdev = std::string(word);
        break;
      }
      rest = rest.substr(colon + 2);
    }
  }
  // AER names the device that reported the error after "error received: ".
  if (const std::size_t r = s.find("error received: "); r != std::string_view::npos) {
    const std::string_view source = s.substr(r + 16, 12);
    if (isPciAddress(source)) subject.pci_address = std::string(source);
  }
  if (subject.pci_address.empty()) subject.pci_address = std::string(findPciAddress(s));
  return subject;
}

std::string kernelMessageSubject(std::string_view message) {
  KernelMessageSubject s = kernelMessageSubjectOf(message);
  if (!s.pci_address.empty()) return s.pci_address;
  if (!s.rdma_device.empty()) return s.rdma_device;
  return s.netdev;
}

v1::KernelLog filterKernelLog(std::string_view pasted, const KernelLogOptions& options) {
  const std::string text = pasteText(pasted, kernelPaste());
  // A kept line owns its text: a line joined from a wrapped paste exists only here.
  struct Kept {
    std::string line;
    uint32_t line_number;
  };
  std::deque<Kept> kept;
  uint64_t scanned = 0;
  uint64_t matched = 0;
  uint64_t stamped = 0;
  forEachLogicalLine(text, [&](std::string_view line, uint32_t n) {
    ++scanned;
    LineParts parts = splitKernelLine(line);
    if (!parts.timestamp.empty()) ++stamped;
    if (!isRdmaRelevant(parts.message)) return;
    ++matched;
    if (options.max_lines == 0) return;
    if (kept.size() == options.max_lines) kept.pop_front();
    kept.push_back({std::string(line), n});
  });
  v1::KernelLog log;
  log.set_source(options.source);
  log.set_lines_scanned(scanned);
  log.set_lines_matched(matched);
  log.set_lines_stamped(stamped);
  log.set_truncated(matched > kept.size());
  for (const auto& k : kept) fillLine(log.add_lines(), splitKernelLine(k.line), k.line_number);
  return log;
}

}  // namespace ibc::core
