// Line location: finds NCCL's own lines in mangled text (launcher tags, timestamps, logging
// prefixes, markdown, terminal wrapping) by their shape, wherever they start.
#include <cctype>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/text.h"
#include "nccl_log_internal.h"

namespace ibc::core::nccl_log_internal {

namespace {

// A host as NCCL prints it (gethostname, possibly redacted by the poster as "...-48" or
// "<cluster_name>"). Markup or a tag glued to it ("```node1", "[default3]:node1") is not.
bool isHostName(std::string_view h) {
  if (h.size() > 2 && h.front() == '<' && h.back() == '>') h = h.substr(1, h.size() - 2);
  for (char c : h) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_') {
      return false;
    }
  }
  return !h.empty();
}

// The level marker and the message after NCCL's prefix: "NCCL INFO ...", "net_ib.cc:93 NCCL
// WARN ..." (the WARN call site goes to `d.file`). False when `rest` has no marker.
bool readLevelAndMessage(std::string_view rest, DebugLine& d) {
  struct Marker {
    std::string_view text;
    DebugLine::Level level;
  };
  for (const Marker& m :
       {Marker{"NCCL INFO", DebugLine::Level::Info}, Marker{"NCCL WARN", DebugLine::Level::Warn},
        Marker{"NCCL TRACE", DebugLine::Level::Trace}, Marker{"NCCL CALL", DebugLine::Level::Call},
        // NCCL 2.0-2.2 printed the level without "NCCL ": "host:pid:tid [0] INFO NET : ...",
        // "[0] include/socket.h:185 WARN Call to connect failed".
        Marker{"INFO", DebugLine::Level::Info}, Marker{"WARN", DebugLine::Level::Warn}}) {
    std::size_t pos = std::string_view::npos;
    if (startsWith(rest, m.text)) {
      pos = 0;
    } else if (m.level == DebugLine::Level::Warn || m.level == DebugLine::Level::Trace) {
      // WARN and TRACE carry a call site before the level: "net_ib.cc:93 NCCL WARN".
      // Bounded: a call site is short, and a long line must not be rescanned per candidate.
      const std::size_t found = rest.substr(0, 200).find(m.text);
      if (found != std::string_view::npos && found < 160 && rest[found - 1] == ' ') pos = found;
    }
    if (pos == std::string_view::npos) continue;
    const std::size_t after = pos + m.text.size();
    if (after < rest.size() && rest[after] != ' ') continue;
    d.level = m.level;
    d.file = trim(rest.substr(0, pos));
    d.message = trim(after < rest.size() ? rest.substr(after + 1) : std::string_view{});
    return true;
  }
  return false;
}

bool isHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_' ||
         c == ':';
}

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return isDigit(c); });
}

// "socket.cc:586", "misc/socket.cc:586", "rings.cc:19": a source file and a line number.
bool isCallSite(std::string_view g) {
  const std::size_t colon = g.rfind(':');
  if (colon == std::string_view::npos || !allDigits(g.substr(colon + 1))) return false;
  const std::string_view path = g.substr(0, colon);
  const std::size_t dot = path.rfind('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < path.size() &&
         path.find(' ') == std::string_view::npos;
}

// One "[...]" field of a bracketed prefix, read by its shape into `d`.
void readBracketField(std::string_view g, DebugLine& d) {
  if (const std::size_t at = g.find(":pid="); at != std::string_view::npos) {
    if (isHostName(g.substr(0, at)) && allDigits(g.substr(at + 5))) {
      d.host = g.substr(0, at);
      d.pid = g.substr(at + 5);
    }
  } else if (const std::size_t c = g.find(':'); c != std::string_view::npos &&
                                                allDigits(g.substr(0, c)) &&
                                                allDigits(g.substr(c + 1))) {
    d.pid = g.substr(0, c);  // "pid:tid"
  } else if (allDigits(g) && g.size() <= 4) {
    if (auto dev = parseInt(g)) d.device = static_cast<int>(*dev);
  } else if (isCallSite(g)) {
    d.file = g;
  } else if (d.host.empty() && isHostName(g) && !allDigits(g)) {
    d.host = g;
  }
}

// "[2026-03-13 22:26:02] " (NCCL_DEBUG_TIMESTAMP_FORMAT default "[%F %T] ").
std::size_t matchNcclTimestamp(std::string_view s) {
  if (s.size() < 21 || s[0] != '[' || !isDigit(s[1]) || !isDigit(s[4]) || s[5] != '-') return 0;
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return 0;
  std::size_t end = close + 1;
  if (end < s.size() && s[end] == ' ') ++end;
  return end;
}

bool looksLikeNcclBody(std::string_view s) {
  return parseDebugLine(s).has_value() || startsWith(s, "NCCL version") || startsWith(s, "#") ||
         splitMpiTag(s).has_value() || splitTorchRank(s).has_value() || matchNcclTimestamp(s) > 0;
}

// Before a framework line ("node-3: Traceback ..."), only a name shaped like a cluster host
// counts: lower case with a digit ("node-3", "10.0.87.143", "gpu7"). Words such as
// "RuntimeError:" or "torch.distributed.DistBackendError:" are message text.
bool looksLikePdshHost(std::string_view token) {
  bool digit = false;
  for (char c : token) {
    if (c >= 'A' && c <= 'Z') return false;
    if (isDigit(c)) digit = true;
  }
  return digit;
}

}  // namespace

std::optional<DebugLine> parseDebugLine(std::string_view s) {
  const std::size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp == 0) return std::nullopt;
  const std::string_view token = s.substr(0, sp);
  const std::size_t c1 = token.find(':');
  if (c1 == std::string_view::npos || c1 == 0 || c1 + 1 >= token.size()) return std::nullopt;
  DebugLine d;
  d.host = token.substr(0, c1);
  if (!isHostName(d.host)) return std::nullopt;
  const std::string_view ids = token.substr(c1 + 1);
  d.pid = ids.substr(0, ids.find(':'));
  if (d.pid.empty()) return std::nullopt;
  for (char c : ids) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != ':') return std::nullopt;
  }
  std::string_view rest = s.substr(sp + 1);
  if (rest.size() < 4 || rest[0] != '[') return std::nullopt;
  const std::size_t close = rest.find(']');
  if (close == std::string_view::npos || close < 2 || close > 6) return std::nullopt;
  auto dev = parseInt(rest.substr(1, close - 1));
  if (!dev) return std::nullopt;
  d.device = static_cast<int>(*dev);
  rest = rest.substr(close + 1);
  if (rest.empty() || rest[0] != ' ') return std::nullopt;
  rest.remove_prefix(1);
  if (!readLevelAndMessage(rest, d)) return std::nullopt;
  return d;
}

// The debug line wherever it starts in `s`, whatever precedes it (timestamps of any format,
// log collectors' and container runtimes' prefixes, launcher tags, markdown, line numbers,
// colour residue): found by its own shape, "host:pid[:tid] [dev] ... NCCL LEVEL", never by a
// list of known prefixes. Candidates are the "[dev] " brackets after a space; each is tried
// with the host token that ends right before it. Bounded work per line: at most
// kMaxCandidates brackets are tried, each parse stops at the level marker.
std::optional<std::pair<std::size_t, DebugLine>> findDebugLine(std::string_view s) {
  constexpr int kMaxCandidates = 8;
  int tried = 0;
  for (std::size_t open = s.find(" ["); open != std::string_view::npos && tried < kMaxCandidates;
       open = s.find(" [", open + 2)) {
    const std::size_t bracket = open + 1;
    if (bracket + 2 >= s.size() || !isDigit(s[bracket + 1])) continue;
    std::size_t start = open;
    while (start > 0 && isHostChar(s[start - 1])) --start;
    while (start < open && s[start] == ':') ++start;  // "<stdout>:host:pid:tid"
    if (start == open) continue;
    ++tried;
    if (auto d = parseDebugLine(s.substr(start))) return std::make_pair(start, *d);
  }
  return std::nullopt;
}

// Sites that route NCCL's debug output through their own logger print its fields in brackets
// right before the level: "[training-pod2-1][1982595:1982762][0][rings.cc:19] NCCL INFO ...",
// "[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN
// ...". Read by the fields' own shapes (a host, "pid:tid" or "host:pid=N", a device number, a
// call site; timestamps and counters are skipped), never by a list of formats. A host and a pid
// are required. Returns where the first field starts. Bounded: one marker, at most 8 fields.
std::optional<std::pair<std::size_t, DebugLine>> findBracketedDebugLine(std::string_view s) {
  const std::size_t marker = s.substr(0, 400).find("] NCCL ");
  if (marker == std::string_view::npos) return std::nullopt;
  DebugLine d;
  if (!readLevelAndMessage(s.substr(marker + 2), d) || !d.file.empty()) return std::nullopt;
  std::size_t end = marker + 1;  // one past the last field's ']'
  std::size_t start = std::string_view::npos;
  for (int fields = 0; fields < 8 && end > 0 && s[end - 1] == ']'; ++fields) {
    const std::size_t open = s.rfind('[', end - 1);
    if (open == std::string_view::npos) break;
    readBracketField(s.substr(open + 1, end - open - 2), d);
    start = open;
    end = open;
    if (end >= 2 && s[end - 1] == ' ' && s[end - 2] == ']') --end;  // "] [" between fields
  }
  if (start == std::string_view::npos || d.host.empty() || d.pid.empty()) return std::nullopt;
  return std::make_pair(start, d);
}

// A launcher's rank tag anywhere in the text before a debug line found by its shape (a
// timestamp may come first): Open MPI "[1,3]<stdout>:", torchrun "[rank3]:" / "[default3]:",
// srun "3: " as the last word. -1 when none.
int rankInPrefix(std::string_view prefix) {
  for (std::string_view tag : {"]<stdout>:", "]<stderr>:"}) {
    if (const std::size_t end = prefix.rfind(tag); end != std::string_view::npos) {
      const std::size_t comma = prefix.rfind(',', end);
      if (comma != std::string_view::npos) {
        if (auto r = parseInt(prefix.substr(comma + 1, end - comma - 1)); r && *r >= 0) {
          return static_cast<int>(*r);
        }
      }
    }
  }
  for (std::string_view tag : {"[rank", "[default"}) {
    if (const std::size_t at = prefix.rfind(tag); at != std::string_view::npos) {
      const std::size_t close = prefix.find("]:", at);
      if (close != std::string_view::npos) {
        if (auto r = parseInt(prefix.substr(at + tag.size(), close - at - tag.size()));
            r && *r >= 0) {
          return static_cast<int>(*r);
        }
      }
    }
  }
  // srun's label first ("6: 2025-02-18T12:54:01Z host:..."), or as the last word.
  if (auto label = splitTaskLabel(prefix)) return label->rank;
  const std::string_view t = trimRight(prefix);
  if (!t.empty() && t.back() == ':') {
    const std::size_t sp = t.find_last_of(" \t");
    const std::string_view word = t.substr(sp == std::string_view::npos ? 0 : sp + 1);
    if (auto r = parseInt(word.substr(0, word.size() - 1)); r && *r >= 0 && word.size() <= 8) {
      return static_cast<int>(*r);
    }
  }
  return -1;
}

Stripped stripLauncherPrefixes(std::string_view line) {
  Stripped st;
  std::string_view rest = trimRight(line);
  for (int i = 0; i < 8; ++i) {
    if (auto tag = splitMpiTag(rest)) {
      st.launcher_rank = tag->rank;
      rest = tag->rest;
      continue;
    }
    if (auto tr = splitTorchRank(rest)) {
      st.launcher_rank = tr->rank;
      rest = tr->rest;
      continue;
    }
    if (std::size_t ts = matchNcclTimestamp(rest)) {
      rest.remove_prefix(ts);
      continue;
    }
    if (auto label = splitTaskLabel(rest); label && looksLikeNcclBody(label->rest)) {
      st.launcher_rank = label->rank;
      rest = label->rest;
      continue;
    }
    if (auto hp = splitHostPrefix(rest)) {
      auto next = splitHostPrefix(hp->rest);
      if ((next && next->host == hp->host) || looksLikeNcclBody(hp->rest) ||
          looksLikePdshHost(hp->host)) {
        st.pdsh_host = hp->host;
        rest = hp->rest;
        continue;
      }
    }
    break;
  }
  st.body = trimLeft(rest);
  return st;
}

}  // namespace ibc::core::nccl_log_internal

namespace ibc::core::nccl_log_internal {

bool startsNcclRecord(std::string_view line) {
  const std::string_view t = trim(line);
  const Stripped st = stripLauncherPrefixes(t);
  if (st.body.size() != t.size()) return true;  // a launcher, host or time prefix
  return parseDebugLine(st.body).has_value() || has(t, "NCCL INFO") || has(t, "NCCL WARN");
}

}  // namespace ibc::core::nccl_log_internal
