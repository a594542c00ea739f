#include "ibc/core/paste.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Digits at s[i...]; their count.
std::size_t digitsAt(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && isDigit(s[i + n])) ++n;
  return n;
}

// The prefixes a launcher, a logger or a viewer puts in front of every line.
// Syslog and journal lines are timestamps (Time) that also carry a host and a pid.
enum class Kind { Gutter, Number, Rank, Time, Host };
constexpr std::size_t kKinds = 5;

struct Prefix {
  Kind kind;
  std::size_t length;  // bytes taken off, trailing blanks included
  std::string value;   // line number, rank, time or host
  std::string host;    // Syslog: the host
  std::string pid;     // Syslog: the pid
};

std::size_t blanksAt(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && (s[i + n] == ' ' || s[i + n] == '\t')) ++n;
  return n;
}

// "     12\t" (cat -n, nl).
std::optional<Prefix> gutterAt(std::string_view s) {
  const std::size_t lead = blanksAt(s, 0);
  const std::size_t d = digitsAt(s, lead);
  if (d == 0 || d > 9 || lead + d >= s.size() || s[lead + d] != '\t') return std::nullopt;
  return Prefix{Kind::Gutter, lead + d + 1, std::string(s.substr(lead, d)), {}, {}};
}

// "12:" or "12: " (grep -n, srun --label): a line number or a task, told apart later.
std::optional<Prefix> numberAt(std::string_view s) {
  const std::size_t d = digitsAt(s, 0);
  if (d == 0 || d > 9 || d >= s.size() || s[d] != ':') return std::nullopt;
  if (d + 1 < s.size() && isDigit(s[d + 1])) return std::nullopt;  // "12:30" is a time
  // srun puts one space after its label, grep -n none: the line's own blanks stay.
  const std::size_t space = d + 1 < s.size() && s[d + 1] == ' ' ? 1 : 0;
  return Prefix{Kind::Number, d + 1 + space, std::string(s.substr(0, d)), {}, {}};
}

// "[3] ", "[3]: ", "[rank3]: ", "[1,3]<stdout>: ".
std::optional<Prefix> rankAt(std::string_view s) {
  if (s.empty() || s[0] != '[') return std::nullopt;
  std::size_t i = 1;
  if (startsWith(s.substr(1), "rank")) i += 4;
  std::size_t d = digitsAt(s, i);
  if (d == 0 || d > 7) return std::nullopt;
  std::string rank(s.substr(i, d));
  i += d;
  if (i < s.size() && s[i] == ',') {  // Open MPI [jobid,rank]
    const std::size_t r = digitsAt(s, i + 1);
    if (r == 0) return std::nullopt;
    rank = std::string(s.substr(i + 1, r));
    i += 1 + r;
  }
  if (i >= s.size() || s[i] != ']') return std::nullopt;
  ++i;
  for (std::string_view tag : {"<stdout>", "<stderr>"}) {
    if (startsWith(s.substr(i), tag)) i += tag.size();
  }
  if (i < s.size() && s[i] == ':') ++i;
  const std::size_t blanks = blanksAt(s, i);
  if (blanks == 0 && i < s.size() && s[i - 1] != ':') return std::nullopt;
  return Prefix{Kind::Rank, i + blanks, std::move(rank), {}, {}};
}

// ISO 8601 / RFC 3339 and the logging libraries' "2024-05-01 12:00:00,123", optionally in
// brackets, then a blank, ':' or " - ".
std::optional<Prefix> isoTimeAt(std::string_view s) {
  std::size_t i = s.size() > 0 && s[0] == '[' ? 1 : 0;
  const std::size_t start = i;
  auto fixed = [&](std::size_t n, char sep) {
    if (digitsAt(s, i) < n) return false;
    i += n;
    if (sep == 0) return true;
    if (i >= s.size() || s[i] != sep) return false;
    ++i;
    return true;
  };
  if (!fixed(4, '-') || !fixed(2, '-') || !fixed(2, 0)) return std::nullopt;
  if (i >= s.size() || (s[i] != 'T' && s[i] != ' ')) return std::nullopt;
  ++i;
  if (!fixed(2, ':') || !fixed(2, ':') || !fixed(2, 0)) return std::nullopt;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) i += 1 + digitsAt(s, i + 1);
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-') && digitsAt(s, i + 1) >= 2) {
    i += 1 + digitsAt(s, i + 1);
    if (i < s.size() && s[i] == ':') i += 1 + digitsAt(s, i + 1);
  }
  const std::string time(s.substr(start, i - start));
  if (start == 1) {
    if (i >= s.size() || s[i] != ']') return std::nullopt;
    ++i;
  }
  if (i < s.size() && s[i] == ':') ++i;
  std::size_t end = i + blanksAt(s, i);
  if (startsWith(s.substr(end), "- ")) end += 2;  // "2024-... - INFO - ..."
  if (end == i && i < s.size()) return std::nullopt;
  return Prefix{Kind::Time, end, time, {}, {}};
}

// "host prog[pid]: " or "host prog: " after a syslog or journal time.
std::size_t syslogSourceAt(std::string_view s, std::size_t i, Prefix& p) {
  const std::size_t host_end = s.find(' ', i);
  if (host_end == std::string_view::npos || host_end == i) return 0;
  const std::size_t colon = s.find(": ", host_end + 1);
  if (colon == std::string_view::npos || colon - host_end > 64) return 0;
  std::string_view prog = s.substr(host_end + 1, colon - host_end - 1);
  if (prog.empty() || prog.find(' ') != std::string_view::npos) return 0;
  p.host = std::string(s.substr(i, host_end - i));
  if (const auto open = prog.find('['); open != std::string_view::npos && prog.back() == ']')
    p.pid = std::string(prog.substr(open + 1, prog.size() - open - 2));
  return colon + 2;
}

// "May  1 12:00:00 host prog[pid]: ".
std::optional<Prefix> syslogAt(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kMonths{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() < 16) return std::nullopt;
  bool month = false;
  for (auto m : kMonths) month = month || s.substr(0, 3) == m;
  if (!month || s[3] != ' ') return std::nullopt;
  std::size_t i = 4 + (s[4] == ' ' ? 1 : 0);
  const std::size_t day = digitsAt(s, i);
  if (day == 0 || day > 2) return std::nullopt;
  i += day;
  if (i + 9 > s.size() || s[i] != ' ' || digitsAt(s, i + 1) != 2 || s[i + 3] != ':' ||
      digitsAt(s, i + 4) != 2 || s[i + 6] != ':' || digitsAt(s, i + 7) != 2)
    return std::nullopt;
  i += 9;
  Prefix p{Kind::Time, 0, std::string(s.substr(0, i)), {}, {}};
  if (i < s.size() && s[i] == ' ') {
    if (const std::size_t end = syslogSourceAt(s, i + 1, p); end > 0) {
      p.length = end;
      return p;
    }
  }
  p.length = i + blanksAt(s, i);
  return p;
}

// "node12: " (pdsh, clush): a host-name word, then ": ".
std::optional<Prefix> hostAt(std::string_view s) {
  const std::size_t colon = s.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > 63) return std::nullopt;
  const std::string_view word = s.substr(0, colon);
  bool letter = false;
  for (char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      return std::nullopt;
    letter = letter || std::isalpha(static_cast<unsigned char>(c));
  }
  if (!letter) return std::nullopt;
  return Prefix{Kind::Host, colon + 2, std::string(word), {}, {}};
}

// The next prefix of `s` among the kinds allowed, or nothing.
std::optional<Prefix> prefixAt(std::string_view s, const std::array<bool, kKinds>& allowed) {
  using Finder = std::optional<Prefix> (*)(std::string_view);
  static constexpr std::array<std::pair<Kind, Finder>, 6> kFinders{{
      {Kind::Gutter, gutterAt},
      {Kind::Time, isoTimeAt},
      {Kind::Time, syslogAt},
      {Kind::Rank, rankAt},
      {Kind::Number, numberAt},
      {Kind::Host, hostAt},
  }};
  for (const auto& [kind, find] : kFinders) {
    if (!allowed[static_cast<std::size_t>(kind)]) continue;
    if (auto p = find(s)) return p;
  }
  return std::nullopt;
}

// Markdown and mail quoting: "> ", "> > ", ">> ".
std::string_view withoutQuotes(std::string_view line) {
  std::size_t lead = blanksAt(line, 0);
  if (lead > 3 || lead >= line.size() || line[lead] != '>') return line;
  line.remove_prefix(lead);
  while (!line.empty() && line[0] == '>') {
    line.remove_prefix(1);
    if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
  }
  return line;
}

constexpr std::size_t kMaxPrefixes = 6;

constexpr std::size_t kMaxTagBytes = 160;

bool isTagName(std::string_view name) {
  static constexpr std::string_view kTags[] = {
      "pre",    "code", "br",      "p",       "div",  "span", "tt",   "b", "i",
      "strong", "em",   "details", "summary", "samp", "kbd",  "font", "u", "blockquote"};
  for (std::string_view t : kTags) {
    if (name == t) return true;
  }
  return false;
}

}  // namespace

std::string withoutHtml(std::string_view line) {
  std::string clean;
  clean.reserve(line.size());
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == '<') {
      // A tag may carry attributes (<font color="red">): its name is the first word.
      const std::size_t close = line.find('>', i);
      if (close != std::string_view::npos && close - i <= kMaxTagBytes) {
        std::string_view name = line.substr(i + 1, close - i - 1);
        if (!name.empty() && name[0] == '/') name.remove_prefix(1);
        if (!name.empty() && name.back() == '/') name.remove_suffix(1);
        name = trim(name);
        name = name.substr(0, name.find_first_of(" \t"));
        if (isTagName(name)) {
          i = close + 1;
          continue;
        }
      }
    } else if (line[i] == '&') {
      static constexpr std::pair<std::string_view, char> kEntities[] = {
          {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}};
      bool decoded = false;
      for (const auto& [entity, c] : kEntities) {
        if (line.substr(i, entity.size()) == entity) {
          clean.push_back(c);
          i += entity.size();
          decoded = true;
          break;
        }
      }
      if (decoded) continue;
    }
    clean.push_back(line[i]);
    ++i;
  }
  return clean;
}

std::string expandCollapsedLines(std::string_view text) {
  std::size_t literal = 0;
  std::size_t real = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && text[i + 1] == 'n') ++literal;
  }
  for (char c : text) real += c == '\n' ? 1 : 0;
  if (literal < 3 || literal <= real) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char n = text[i + 1];
      if (n == 'n' || n == 't' || n == '"' || n == 'r') {
        if (n != 'r') out.push_back(n == 'n' ? '\n' : n == 't' ? '\t' : '"');
        ++i;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string withoutAnsi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out.push_back(line[i]);
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= 0x40 && line[j] <= 0x7e)) ++j;
      i = j;  // the final byte
    } else if (i + 1 < line.size() && line[i + 1] == ']') {
      std::size_t j = i + 2;
      while (j < line.size() && line[j] != '\x07' && line[j] != '\x1b') ++j;
      i = j < line.size() && line[j] == '\x1b' ? j + 1 : j;
    } else {
      ++i;  // a two-byte sequence
    }
  }
  return out;
}

namespace {

// The input's lines with a collapsed log expanded and CR, ANSI, HTML and quoting taken off.
std::vector<PasteLine> cleanLines(std::string_view input) {
  const std::string text = expandCollapsedLines(input);
  std::vector<PasteLine> lines;
  forEachLine(text, [&](std::string_view raw, uint32_t number) {
    std::string_view l = raw;
    while (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    PasteLine p;
    p.source_line = number;
    p.text = withoutHtml(withoutAnsi(l));
    p.text = std::string(withoutQuotes(p.text));
    lines.push_back(std::move(p));
  });
  if (text.size() != input.size()) {
    // A collapsed log came as one string: its quotes are the string's, not the log's.
    auto first = std::find_if(lines.begin(), lines.end(),
                              [](const PasteLine& l) { return !trim(l.text).empty(); });
    if (first != lines.end() && trimLeft(first->text).front() == '"')
      first->text.erase(first->text.find('"'), 1);
    auto last = std::find_if(lines.rbegin(), lines.rend(),
                             [](const PasteLine& l) { return !trim(l.text).empty(); });
    if (last != lines.rend() && trimRight(last->text).back() == '"')
      last->text.erase(last->text.rfind('"'), 1);
  }

  return lines;
}

// Which prefix kinds are this paste's additions (see readPaste), and whether its numbers are
// a viewer's line numbers rather than srun's task labels.
struct PrefixKinds {
  std::array<bool, kKinds> allowed{};
  bool increasing = false;
};

PrefixKinds prefixKindsOf(const std::vector<PasteLine>& lines, const PasteOptions& options) {
  // A prefix kind is a launcher's or a viewer's when it stands on most lines; a few lines
  // that happen to start like one ("2: eth0: <...>" in ip link) are the data's own.
  PrefixKinds out;
  auto& allowed = out.allowed;
  allowed.fill(options.prefixes);
  allowed[static_cast<std::size_t>(Kind::Time)] = options.prefixes && options.timestamps;
  allowed[static_cast<std::size_t>(Kind::Host)] = options.prefixes && options.host_prefix;
  std::array<std::size_t, kKinds> seen{};
  std::map<std::string, std::size_t> hosts;
  std::vector<int64_t> numbers;
  std::size_t nonblank = 0;
  for (const auto& line : lines) {
    std::string_view s = line.text;
    if (trim(s).empty()) continue;
    ++nonblank;
    std::set<Kind> kinds;
    for (std::size_t k = 0; k < kMaxPrefixes; ++k) {
      auto p = prefixAt(s, allowed);
      if (!p || p->length == 0 || p->length > s.size()) break;
      // One host prefix per line: after it, "State: Down" is the data's.
      if (p->kind == Kind::Host && kinds.count(Kind::Host) != 0) break;
      kinds.insert(p->kind);
      if (p->kind == Kind::Host) ++hosts[p->value];
      if (p->kind == Kind::Number) numbers.push_back(std::stoll(p->value));
      s.remove_prefix(p->length);
    }
    for (Kind k : kinds) ++seen[static_cast<std::size_t>(k)];
  }
  const std::size_t most = nonblank - nonblank / 5;  // 80 %
  for (std::size_t k = 0; k < kKinds; ++k) {
    // Timestamps and bracketed ranks are shapes no tool prints at a line's start: half
    // the lines are enough (a log interleaved with unstamped output).
    const bool loose = k == static_cast<std::size_t>(Kind::Time) ||
                       k == static_cast<std::size_t>(Kind::Rank) ||
                       k == static_cast<std::size_t>(Kind::Gutter);
    // A kind that tools print themselves at a line's start needs a few lines to tell.
    allowed[k] = allowed[k] && nonblank > 0 && (loose || nonblank >= 3) &&
                 seen[k] >= (loose ? (nonblank + 1) / 2 : most);
  }
  // A host prefix repeats a few names (pdsh over some hosts); keys of `name: value` data
  // differ from line to line.
  if (allowed[static_cast<std::size_t>(Kind::Host)] &&
      hosts.size() > std::max<std::size_t>(2, nonblank / 4))
    allowed[static_cast<std::size_t>(Kind::Host)] = false;
  // A short output behind srun: one task's label on every line but one (the prompt) is
  // enough; one labelled line alone never is ("2: ib0: <...>" is ip link's).
  const bool one_task =
      numbers.size() >= 2 &&
      std::all_of(numbers.begin(), numbers.end(), [&](int64_t n) { return n == numbers.front(); });
  if (!allowed[static_cast<std::size_t>(Kind::Number)] && options.prefixes && one_task &&
      seen[static_cast<std::size_t>(Kind::Number)] + 1 >= nonblank) {
    allowed[static_cast<std::size_t>(Kind::Number)] = true;
  }
  // Increasing numbers are a viewer's line numbers; repeating ones srun's task labels.
  out.increasing = numbers.size() > 1;
  for (std::size_t i = 1; i < numbers.size() && out.increasing; ++i)
    out.increasing = numbers[i] > numbers[i - 1];
  return out;
}

// Takes the allowed prefixes off one line, keeping what they said.
void peelPrefixes(PasteLine& line, const PrefixKinds& kinds) {
  std::string_view s = line.text;
  std::size_t taken = 0;
  bool host_taken = false;
  for (std::size_t k = 0; k < kMaxPrefixes; ++k) {
    auto p = prefixAt(s, kinds.allowed);
    if (!p || p->length == 0 || p->length > s.size()) break;
    if (p->kind == Kind::Host && std::exchange(host_taken, true)) break;
    switch (p->kind) {
      case Kind::Gutter: break;
      case Kind::Number:
        if (!kinds.increasing) line.rank = p->value;
        break;
      case Kind::Rank: line.rank = p->value; break;
      case Kind::Time:
        line.time = p->value;
        if (!p->host.empty()) line.host = p->host;
        if (!p->pid.empty()) line.pid = p->pid;
        break;
      case Kind::Host: line.host = p->value; break;
    }
    s.remove_prefix(p->length);
    taken += p->length;
  }
  if (taken > 0) line.text.erase(0, taken);
}

}  // namespace

std::vector<PasteLine> readPaste(std::string_view input, const PasteOptions& options) {
  std::vector<PasteLine> lines = cleanLines(input);
  const PrefixKinds kinds = prefixKindsOf(lines, options);
  for (auto& line : lines) peelPrefixes(line, kinds);
  return lines;
}

namespace {

enum class Wrap { None, Terminal, Mail };

// The column the paste was wrapped at, and how, from its longest lines and what follows
// them.
std::pair<Wrap, std::size_t> wrapColumn(
    const std::vector<PasteLine>& lines,
    const std::function<bool(std::string_view)>& starts_record) {
  std::size_t longest = 0;
  for (const auto& l : lines) longest = std::max(longest, l.text.size());
  if (longest < 60) return {Wrap::None, 0};
  // A terminal: lines end exactly at the column, most of them followed by their rest (not
  // a blank line, not a record), and some rest shorter than the column (else these are
  // whole lines of one length: a repeated message).
  std::size_t at = 0;
  std::size_t continued = 0;
  std::size_t tails = 0;
  // A mail client: records cut within a few columns of the longest, at most 80.
  std::size_t near_records = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i].text;
    if (longest <= 80 && l.size() + 12 >= longest && starts_record(l)) ++near_records;
    if (l.size() != longest || i + 1 == lines.size()) continue;
    ++at;
    const std::string& next = lines[i + 1].text;
    if (trim(next).empty() || starts_record(next)) continue;
    ++continued;
    if (next.size() < longest) ++tails;
  }
  if (at >= 3 && continued * 2 >= at && tails >= 1) return {Wrap::Terminal, longest};
  if (longest <= 80 && near_records >= 3) return {Wrap::Mail, longest};
  return {Wrap::None, 0};
}

}  // namespace

std::vector<PasteLine> rejoinWrapped(std::vector<PasteLine> lines,
                                     const std::function<bool(std::string_view)>& starts_record) {
  const auto [wrap, column] = wrapColumn(lines, starts_record);
  if (wrap == Wrap::None) return lines;
  constexpr int kMaxPieces = 8;
  std::vector<PasteLine> out;
  std::size_t last_piece = 0;  // the length of the last piece joined into out.back()
  int pieces = 0;
  for (auto& l : lines) {
    const bool reached = wrap == Wrap::Terminal ? last_piece == column : last_piece * 2 >= column;
    if (!out.empty() && reached && pieces < kMaxPieces && !trim(l.text).empty() &&
        !starts_record(l.text)) {
      std::string& joined = out.back().text;
      const bool blank_between =
          (!joined.empty() && std::isspace(static_cast<unsigned char>(joined.back()))) ||
          std::isspace(static_cast<unsigned char>(l.text.front()));
      if (wrap == Wrap::Mail && !blank_between) joined.push_back(' ');
      last_piece = l.text.size();
      joined += l.text;
      ++pieces;
      continue;
    }
    last_piece = l.text.size();
    pieces = 1;
    out.push_back(std::move(l));
  }
  return out;
}

std::string pasteText(std::string_view text, const PasteOptions& options) {
  std::string out;
  out.reserve(text.size());
  for (const auto& l : readPaste(text, options)) {
    out += l.text;
    out.push_back('\n');
  }
  return out;
}

}  // namespace ibc::core
