#include "ibc/core/nccl_log.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ibc/core/launcher_prefix.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

using Kind = v1::NcclEvent::Kind;

constexpr std::size_t kMaxEventText = 1024;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// Decimal integer right after `key` (leading spaces allowed, optional '-').
std::optional<int64_t> intAfter(std::string_view s, std::string_view key) {
  const std::size_t pos = s.find(key);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = trimLeft(s.substr(pos + key.size()));
  std::size_t i = 0;
  if (!rest.empty() && rest[0] == '-') ++i;
  const std::size_t digits = i;
  while (i < rest.size() && isDigit(rest[i]) && i < 18) ++i;
  if (i == digits) return std::nullopt;
  return parseInt(rest.substr(0, i));
}

// Token right after `key`, up to a space (or one of `stops`).
std::string_view tokenAfter(std::string_view s, std::string_view key,
                            std::string_view stops = " ") {
  const std::size_t pos = s.find(key);
  if (pos == std::string_view::npos) return {};
  std::string_view rest = s.substr(pos + key.size());
  return rest.substr(0, rest.find_first_of(stops));
}

std::optional<uint64_t> parseHex(std::string_view s) {
  if (startsWith(s, "0x") || startsWith(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    const int d = std::isxdigit(static_cast<unsigned char>(c)) == 0 ? -1
                  : isDigit(c)                                      ? c - '0'
                                                                    : (std::tolower(c) - 'a' + 10);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// errno for the strerror() texts NCCL prints ("failed with error Connection timed out").
int errnoFromText(std::string_view s) {
  static constexpr std::pair<std::string_view, int> kErrnos[] = {
      {"Operation not permitted", 1},    {"Cannot allocate memory", 12},
      {"Permission denied", 13},         {"No such device", 19},
      {"Invalid argument", 22},          {"Broken pipe", 32},
      {"Network is unreachable", 101},   {"Software caused connection abort", 103},
      {"Connection reset by peer", 104}, {"Connection timed out", 110},
      {"Connection refused", 111},       {"No route to host", 113},
  };
  for (const auto& [text, value] : kErrnos) {
    if (has(s, text)) return value;
  }
  return -1;
}

// Socket/bootstrap connection failures (misc/socket.cc, bootstrap.cc, proxy.cc).
bool isConnectFailure(std::string_view msg) {
  return (has(msg, "Call to recv from") || has(msg, "Call to send to") ||
          has(msg, "Call to connect")) ||
         has(msg, "Connection closed by remote peer") ||
         has(msg, "Failed to execute operation Connect") || has(msg, "Connection refused") ||
         has(msg, "Connection reset") || has(msg, "Broken pipe") ||
         (has(msg, "onnect") &&
          (has(msg, "fail") || has(msg, "timed out") || has(msg, "timeout") ||
           has(msg, "exceeded") ||
           // socketPollConnect: "Connect to 10.0.0.4<56849> returned 113(No route to host)"
           errnoFromText(msg) > 0 ||
           // "socketPollConnect poll() returned 1, no POLLOUT events": the socket never became
           // writable (POLLERR/POLLHUP), NCCL gives up on the connection.
           has(msg, "POLLOUT")));
}

// A NCCL debug line after the launcher prefixes: "host:pid:tid [dev] ...".
struct DebugLine {
  enum class Level { Info, Warn, Trace, Call };
  std::string_view host;
  std::string_view pid;
  int device = -1;
  Level level = Level::Info;
  std::string_view file;  // WARN call site "transport/net_ib.cc:1295" (may carry " (func)")
  std::string_view message;
};

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

bool isHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_' ||
         c == ':';
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

// "[2026-03-13 22:26:02] " (NCCL_DEBUG_TIMESTAMP_FORMAT default "[%F %T] ").
std::size_t matchNcclTimestamp(std::string_view s) {
  if (s.size() < 21 || s[0] != '[' || !isDigit(s[1]) || !isDigit(s[4]) || s[5] != '-') return 0;
  const std::size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return 0;
  std::size_t end = close + 1;
  if (end < s.size() && s[end] == ' ') ++end;
  return end;
}

struct Stripped {
  std::string_view body;
  std::string_view pdsh_host;
  int launcher_rank = -1;
};

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

std::string versionAt(std::string_view s, std::string_view key) {
  std::string_view v = tokenAfter(s, key, " ,;)");
  while (!v.empty() && (v.back() == '.' || v.back() == ':')) v.remove_suffix(1);
  if (v.empty() || !isDigit(v[0])) return {};
  return printable(v, 64);
}

struct TransportUse {
  std::string name;
  uint32_t lines = 0;
  bool gdr = false;
};

// Context of the line an event comes from.
struct LineContext {
  std::string host;
  std::string pid;
  int device = -1;
  int launcher_rank = -1;
  uint32_t line_number = 0;
  std::string_view raw;
};

struct EventRecord {
  v1::NcclEvent event;
  std::string rank_key;  // host|pid|device, to fill the rank after the whole log is read
  int launcher_rank = -1;
};

struct CollProgress {
  std::string host;
  std::string comm_key;  // host|pid|comm
  std::string rank_key;  // host|pid|device
  int comm_nranks = 0;
  uint64_t op_count = 0;
  uint32_t line_number = 0;
};

struct CommInfo {
  int rank = -1;
  int nranks = 0;
};

// Keeps insertion order and drops duplicates.
class OrderedSet {
 public:
  void add(std::string value) {
    if (value.empty() || !seen_.insert(value).second) return;
    values_.push_back(std::move(value));
  }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
  std::unordered_set<std::string> seen_;
};

std::string key3(std::string_view a, std::string_view b, std::string_view c) {
  std::string k;
  k.reserve(a.size() + b.size() + c.size() + 2);
  k.append(a).push_back('|');
  k.append(b).push_back('|');
  k.append(c);
  return k;
}

class NcclLogParser {
 public:
  explicit NcclLogParser(const NcclLogOptions& options) : options_(options) {}

  void line(std::string_view raw, uint32_t n) {
    ++lines_total_;
    Stripped st = stripLauncherPrefixes(raw);
    if (st.body.empty()) return;
    auto d = parseDebugLine(st.body);
    if (!d && (has(st.body, "INFO") || has(st.body, "WARN"))) {
      auto found = findDebugLine(st.body);
      if (!found) found = findBracketedDebugLine(st.body);
      if (found) {
        if (st.launcher_rank < 0) st.launcher_rank = rankInPrefix(st.body.substr(0, found->first));
        st.body = st.body.substr(found->first);
        d = found->second;
      }
    }
    if (has(st.body, "NCCL") || d) ++lines_nccl_;
    if (pending_last_error_) {
      pending_last_error_ = false;
      if (!d) {
        lastErrorEvent(st.body, frameworkContext(st, raw, n));
        return;
      }
    }
    if (d) {
      debugLine(*d, st, raw, n);
    } else {
      otherLine(st, raw, n);
    }
  }

  v1::NcclLogSummary finish();

 private:
  void addHost(std::string_view host) {
    if (!host.empty()) hosts_.add(printable(host, 256));
  }

  void setVersion(std::string version) {
    if (version_.empty()) version_ = std::move(version);
  }

  void debugLine(const DebugLine& d, const Stripped& st, std::string_view raw, uint32_t n) {
    addHost(d.host);
    LineContext ctx{std::string(d.host), std::string(d.pid), d.device, st.launcher_rank, n, raw};
    if (has(d.message, "NCCL version ")) setVersion(versionAt(d.message, "NCCL version "));
    if (d.level == DebugLine::Level::Warn) {
      warned_.insert(ctx.host + "|" + ctx.pid);
      warnLine(d.message, d.file, ctx);
    } else {
      infoLine(d.message, ctx);
    }
  }

  void otherLine(const Stripped& st, std::string_view raw, uint32_t n);
  // Context of a line without an NCCL prefix: pdsh host or the default host.
  LineContext frameworkContext(const Stripped& st, std::string_view raw, uint32_t n) const {
    return LineContext{
        std::string(st.pdsh_host.empty() ? std::string_view(options_.default_host) : st.pdsh_host),
        "",
        -1,
        st.launcher_rank,
        n,
        raw};
  }
  bool inFrameworkBlock(uint32_t n) const;
  void lastErrorEvent(std::string_view text, const LineContext& ctx);
  void infoLine(std::string_view msg, const LineContext& ctx);
  void warnLine(std::string_view msg, std::string_view file, const LineContext& ctx);
  void channelLine(std::string_view msg, const LineContext& ctx);
  void commLine(std::string_view msg, const LineContext& ctx);
  void collLine(std::string_view msg, const LineContext& ctx);
  void testsRankLine(std::string_view body);
  void watchdogLine(std::string_view body, const LineContext& ctx);
  void chainLine(std::string_view site, std::optional<int64_t> result, const LineContext& ctx);

  // Classifies an error text (a WARN message or an embedded "Last error:") and records it.
  void errorEvent(std::string_view msg, const LineContext& ctx);

  v1::NcclEvent* addEvent(Kind kind, const LineContext& ctx) {
    ++events_seen_;
    if (events_.size() >= options_.max_events) {
      events_truncated_ = true;
      return nullptr;
    }
    return fillEvent(events_.emplace_back(), kind, ctx);
  }

  static v1::NcclEvent* fillEvent(EventRecord& r, Kind kind, const LineContext& ctx) {
    r.rank_key = key3(ctx.host, ctx.pid, std::to_string(ctx.device));
    r.launcher_rank = ctx.launcher_rank;
    v1::NcclEvent& e = r.event;
    e.set_kind(kind);
    e.set_host(printable(ctx.host, 256));
    e.set_rank(-1);
    e.set_device(ctx.device);
    e.set_line_number(ctx.line_number);
    e.set_text(printable(trim(ctx.raw), kMaxEventText));
    e.set_status(-1);
    e.set_vendor_err(-1);
    return &e;
  }

  // Configuration facts are reported once per kind and host.
  void configEvent(Kind kind, const LineContext& ctx) {
    if (!config_seen_.insert(std::to_string(static_cast<int>(kind)) + "|" + ctx.host).second) {
      return;
    }
    addEvent(kind, ctx);
  }

  void socketTransport(const LineContext& ctx) {
    if (!socket_seen_.insert(ctx.host + "|" + ctx.pid).second) return;
    addEvent(v1::NcclEvent::SOCKET_TRANSPORT, ctx);
  }

  const NcclLogOptions& options_;
  uint64_t lines_total_ = 0;
  uint64_t lines_nccl_ = 0;
  std::string version_;
  OrderedSet hosts_;
  OrderedSet networks_;
  OrderedSet ib_devices_;
  OrderedSet socket_interfaces_;
  OrderedSet env_settings_;
  std::vector<TransportUse> transports_;
  std::vector<EventRecord> events_;
  uint64_t events_seen_ = 0;
  bool events_truncated_ = false;
  std::unordered_set<std::string> config_seen_;
  std::unordered_set<std::string> socket_seen_;
  std::optional<EventRecord> pending_chain_;  // first chain not from a socket/bootstrap site
  std::string pending_chain_host_;
  std::unordered_set<std::string> chain_seen_;
  std::unordered_set<std::string>
      heartbeat_seen_;  // host|rank  // host|pid|result of chains already reported
  std::unordered_set<std::string> warned_;  // host|pid that printed a WARN
  // host|pid|device → rank, from the communicator with the most ranks seen for it.
  std::unordered_map<std::string, CommInfo> rank_of_;
  // host|pid|comm → rank in that communicator.
  std::unordered_map<std::string, CommInfo> comms_;
  std::map<std::string, CollProgress> coll_progress_;  // by comm_key
  std::map<std::pair<std::string, int>, v1::NcclRankProgress> torch_progress_;
  int init_nranks_ = 0;
  int coll_nranks_ = 0;
  int ring_nranks_ = 0;
  int tests_rank_max_ = -1;
  int channel_rank_max_ = -1;
  // A framework error message spans a few lines; its first event line, 0 when none.
  static constexpr uint32_t kFrameworkBlockLines = 4;
  uint32_t framework_event_line_ = 0;
  bool pending_last_error_ = false;
};

void NcclLogParser::infoLine(std::string_view msg, const LineContext& ctx) {
  // Error propagation "transport/net_socket.cc:368 -> 6": a consequence, not an event, but
  // a stack through net_socket.cc shows the data path is the socket transport.
  if (const std::size_t arrow = msg.find(" -> "); arrow != std::string_view::npos) {
    const std::string_view site = msg.substr(0, arrow);
    if (site.find(' ') == std::string_view::npos && site.find(':') != std::string_view::npos) {
      if (has(site, "net_socket")) socketTransport(ctx);
      chainLine(site, intAfter(msg.substr(arrow), "-> "), ctx);
      return;
    }
  }
  if (startsWith(msg, "[Service thread]")) return;

  if (startsWith(msg, "NET/IB : No device found")) {
    configEvent(v1::NcclEvent::IB_NO_DEVICE, ctx);
    return;
  }
  if (startsWith(msg, "NET/IB : Using ") || startsWith(msg, "NET/IB: Using ")) {
    std::string_view list = msg.substr(msg.find("Using ") + 6);
    list = list.substr(0, list.find(';'));
    for (std::string_view tok : splitWhitespace(list)) {
      const std::size_t close = tok.find(']');
      if (tok.size() < 4 || tok[0] != '[' || close == std::string_view::npos || !isDigit(tok[1]) ||
          close + 1 >= tok.size()) {
        continue;
      }
      ib_devices_.add(printable(tok.substr(close + 1), 128));
    }
    return;
  }
  if (startsWith(msg, "NET/Socket : Using ")) {
    for (std::string_view tok : splitWhitespace(msg.substr(19))) {
      const std::size_t close = tok.find(']');
      if (tok.empty() || tok[0] != '[' || close == std::string_view::npos) continue;
      std::string_view iface = tok.substr(close + 1);
      if (const std::size_t lt = iface.rfind('<'); lt != std::string_view::npos && lt > 0) {
        iface = iface.substr(0, lt);
      }
      socket_interfaces_.add(printable(iface, 128));
    }
    return;
  }
  if (startsWith(msg, "Using network ")) {
    networks_.add(printable(trim(msg.substr(14)), 64));
    return;
  }
  if (startsWith(msg, "Using internal Network ")) {  // NCCL 2.2/2.3: "... Network Socket"
    networks_.add(printable(trim(msg.substr(23)), 64));
    return;
  }
  if (const std::size_t env = msg.find(" set by environment to "); env != std::string_view::npos) {
    std::string_view key = trim(msg.substr(0, env));
    if (const std::size_t sp = key.rfind(' '); sp != std::string_view::npos) {
      key = key.substr(sp + 1);
    }
    std::string_view value = trim(msg.substr(env + 23));
    if (!value.empty() && value.back() == '.') value.remove_suffix(1);
    env_settings_.add(printable(key, 128) + "=" + printable(value, 256));
    if (key == "NCCL_IB_DISABLE" && value != "0") {
      configEvent(v1::NcclEvent::IB_DISABLED_BY_ENV, ctx);
    }
    return;
  }
  if (has(msg, "GPU Direct RDMA Disabled") && !startsWith(msg, "NET/Socket")) {
    configEvent(v1::NcclEvent::GDR_DISABLED, ctx);
    return;
  }
  if (has(msg, "libibverbs") &&
      (has(msg, "Failed") || has(msg, "failed") || has(msg, "cannot") || has(msg, "Unable"))) {
    configEvent(v1::NcclEvent::IBVERBS_MISSING, ctx);
    return;
  }
  if (startsWith(msg, "Channel ") || startsWith(msg, "Ring ")) {
    channelLine(msg, ctx);
    return;
  }
  if (has(msg, ": opCount ")) {
    collLine(msg, ctx);
    return;
  }
  if (has(msg, "comm 0x") && (has(msg, " nranks ") || has(msg, " nRanks "))) {
    commLine(msg, ctx);
    return;
  }
}

void NcclLogParser::channelLine(std::string_view msg, const LineContext& ctx) {
  const std::size_t colon = msg.find(" : ");
  if (colon == std::string_view::npos) return;
  const std::string_view spec = msg.substr(colon + 3);
  const std::size_t via = spec.find(" via ");
  if (via == std::string_view::npos) {
    // Ring listing "Channel 00/32 :    0   1" (2.4: "Ring 00 :    0   1"): the ranks of
    // the ring, so its length is the communicator size.
    const auto tokens = splitWhitespace(spec);
    if (tokens.empty()) return;
    for (std::string_view t : tokens) {
      if (!parseInt(t)) return;
    }
    ring_nranks_ = std::max(ring_nranks_, static_cast<int>(tokens.size()));
    return;
  }
  std::string_view path = trim(spec.substr(via + 5));
  std::string name;
  if (startsWith(path, "NET/")) {
    const std::size_t slash = path.find('/', 4);
    name = printable(path.substr(0, slash), 64);
  } else {
    name = printable(path.substr(0, path.find_first_of("/ (")), 64);
  }
  if (name.empty()) return;
  auto it = std::find_if(transports_.begin(), transports_.end(),
                         [&name](const TransportUse& t) { return t.name == name; });
  if (it == transports_.end()) {
    transports_.push_back({name, 0, false});
    it = transports_.end() - 1;
  }
  ++it->lines;
  if (has(path, "GDRDMA")) it->gdr = true;
  if (name == "NET/Socket") socketTransport(ctx);

  // "A[x] -> B[y] [send]": this process is rank A; "[receive]": rank B.
  const std::size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos || arrow > via) return;
  auto leading = [](std::string_view s) -> std::optional<int> {
    s = trimLeft(s);
    std::size_t i = 0;
    while (i < s.size() && isDigit(s[i]) && i < 9) ++i;
    if (i == 0) return std::nullopt;
    return static_cast<int>(*parseInt(s.substr(0, i)));
  };
  const auto from = leading(spec.substr(0, arrow));
  const auto to = leading(spec.substr(arrow + 2));
  if (!from || !to) return;
  channel_rank_max_ = std::max({channel_rank_max_, *from, *to});
  std::optional<int> local;
  if (has(spec.substr(0, via), "[send]")) local = from;
  if (has(spec.substr(0, via), "[receive]")) local = to;
  if (!local) return;
  const std::string key = key3(ctx.host, ctx.pid, std::to_string(ctx.device));
  if (rank_of_.find(key) == rank_of_.end()) rank_of_[key] = CommInfo{*local, 0};
}

void NcclLogParser::commLine(std::string_view msg, const LineContext& ctx) {
  // "comm 0x7efe60002250 rank 15 nranks 64 cudaDev 0 nvmlDev 0 - Init COMPLETE",
  // "ncclCommInitRank comm 0x.. rank 0 nranks 576 cudaDev 0 ...", "... nRanks 576 nNodes".
  const std::string_view comm = tokenAfter(msg, "comm 0x");
  const auto rank = intAfter(msg, " rank ");
  auto nranks = intAfter(msg, " nranks ");
  if (!nranks) nranks = intAfter(msg, " nRanks ");
  if (comm.empty() || !rank || !nranks || *rank < 0 || *nranks <= 0 || *nranks > 10'000'000) {
    return;
  }
  const int r = static_cast<int>(*rank);
  const int nr = static_cast<int>(*nranks);
  init_nranks_ = std::max(init_nranks_, nr);
  comms_[key3(ctx.host, ctx.pid, comm)] = CommInfo{r, nr};
  int device = ctx.device;
  if (auto cuda = intAfter(msg, "cudaDev ")) device = static_cast<int>(*cuda);
  const std::string key = key3(ctx.host, ctx.pid, std::to_string(device));
  auto it = rank_of_.find(key);
  if (it == rank_of_.end() || it->second.nranks <= nr) rank_of_[key] = CommInfo{r, nr};
}

void NcclLogParser::collLine(std::string_view msg, const LineContext& ctx) {
  // NCCL_DEBUG_SUBSYS=COLL (enqueue.cc): "%s: opCount %lx sendbuff %p recvbuff %p count %zu
  // datatype %d op %d root %d comm %p [nranks=%d] stream %p".
  const auto op_count = parseHex(tokenAfter(msg, ": opCount "));
  const std::string_view comm = tokenAfter(msg, " comm 0x");
  const auto nranks = intAfter(msg, "[nranks=");
  if (!op_count || comm.empty()) return;
  const int nr = nranks ? static_cast<int>(std::clamp<int64_t>(*nranks, 0, 10'000'000)) : 0;
  coll_nranks_ = std::max(coll_nranks_, nr);
  const std::string comm_key = key3(ctx.host, ctx.pid, comm);
  CollProgress& p = coll_progress_[comm_key];
  p.host = ctx.host;
  p.comm_key = comm_key;
  p.rank_key = key3(ctx.host, ctx.pid, std::to_string(ctx.device));
  p.comm_nranks = nr;
  p.op_count = *op_count;
  p.line_number = ctx.line_number;
}

void NcclLogParser::warnLine(std::string_view msg, std::string_view file, const LineContext& ctx) {
  if (startsWith(msg, "NET/IB : No device found")) {
    configEvent(v1::NcclEvent::IB_NO_DEVICE, ctx);
    return;
  }
  // net_ib.cc "NET/IB : Unable to open device mlx5_59", ibvwrap.cc "Call to ibv_open_device
  // failed" (the device's /dev/infiniband/uverbsN cannot be opened): once per host and device.
  if (has(msg, "ibv_open_device") || has(msg, "Unable to open device")) {
    const std::string device = printable(tokenAfter(msg, "open device ", " ,:"), 64);
    if (!config_seen_.insert("open|" + ctx.host + "|" + device).second) return;
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_OPEN_FAILED, ctx)) {
      e->set_rdma_device(device);
      e->set_status(errnoFromText(msg));
    }
    return;
  }
  if (has(msg, "libibverbs")) {
    configEvent(v1::NcclEvent::IBVERBS_MISSING, ctx);
    return;
  }
  if (has(msg, "GPU Direct RDMA Disabled") && !startsWith(msg, "NET/Socket")) {
    configEvent(v1::NcclEvent::GDR_DISABLED, ctx);
    return;
  }
  errorEvent(msg, ctx);
  if (has(file, "net_socket")) socketTransport(ctx);
}

void NcclLogParser::errorEvent(std::string_view msg, const LineContext& ctx) {
  // net_ib.cc: "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d,
  // vendor err %d (%s)"; ib_plugin.c: "... with status=%d opcode=%d len=%d vendor err %d
  // (%s) localGid ..."; older: "Got completion with error %d, opcode %d, len %d, vendor err
  // %d".
  if (has(msg, "Got completion")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_COMPLETION_ERROR, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "with error ");
    if (!status) status = intAfter(msg, "with status=");
    if (status) e->set_status(static_cast<int32_t>(*status));
    if (auto vendor = intAfter(msg, "vendor err "))
      e->set_vendor_err(static_cast<int32_t>(*vendor));
    e->set_peer(printable(tokenAfter(msg, "from peer "), 256));
    const std::size_t vendor_at = msg.find("vendor err ");
    const std::size_t paren =
        vendor_at == std::string_view::npos ? std::string_view::npos : msg.find('(', vendor_at);
    if (paren != std::string_view::npos && msg.find(')', paren) != std::string_view::npos) {
      const std::string_view op = msg.substr(paren + 1, msg.find(')', paren) - paren - 1);
      e->set_opcode_or_op(printable(op, 32));
    } else {
      std::string_view opcode = tokenAfter(msg, "opcode ", " ,");
      if (opcode.empty()) opcode = tokenAfter(msg, "opcode=", " ,");
      e->set_opcode_or_op(printable(opcode, 32));
    }
    return;
  }
  // net_ib.cc: "NET/IB : Got async event : port error", "NET/IB : mlx5_1:1 async fatal event
  // on QP (0x..): invalid request local work queue error".
  if (has(msg, "async") && has(msg, "event")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::IB_ASYNC_EVENT, ctx);
    if (e == nullptr) return;
    for (std::string_view tok : splitWhitespace(msg)) {
      const std::size_t c = tok.rfind(':');
      if (c == std::string_view::npos || c == 0 || c + 1 >= tok.size() || has(tok, "/") ||
          !parseInt(tok.substr(c + 1))) {
        continue;
      }
      e->set_rdma_device(printable(tok, 64));
      break;
    }
    if (const std::size_t c = msg.rfind(": "); c != std::string_view::npos) {
      e->set_opcode_or_op(printable(trim(msg.substr(c + 2)), 128));
    }
    return;
  }
  // ibvwrap: "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx_x:1,
  // curr state INIT, next state RTR, ..."; older "... failed with error Connection timed
  // out"; "ibv_create_qp failed".
  if ((has(msg, "ibv_modify_qp") || has(msg, "ibv_create_qp") || has(msg, "modify_qp")) &&
      (has(msg, "fail") || has(msg, "error"))) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::QP_SETUP_FAILED, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "failed with ");
    if (!status) status = intAfter(msg, "errno ");
    e->set_status(status ? static_cast<int32_t>(*status) : errnoFromText(msg));
    e->set_rdma_device(printable(tokenAfter(msg, "on dev ", " ,"), 64));
    return;
  }
  // "Call to ibv_reg_mr failed", "ibv_reg_dmabuf_mr failed", aws-ofi-nccl "NET/OFI Unable to
  // register memory (type = 1) for device 0. RC: 12, Error: Cannot allocate memory".
  if (has(msg, "ibv_reg_mr") || has(msg, "ibv_reg_dmabuf_mr") ||
      has(msg, "Unable to register memory") || has(msg, "regMr") || has(msg, "reg_mr")) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::REG_MR_FAILED, ctx);
    if (e == nullptr) return;
    auto status = intAfter(msg, "RC: ");
    if (!status) status = intAfter(msg, "errno ");
    if (!status) status = intAfter(msg, "failed with ");
    e->set_status(status ? static_cast<int32_t>(*status) : errnoFromText(msg));
    return;
  }
  if (isConnectFailure(msg)) {
    v1::NcclEvent* e = addEvent(v1::NcclEvent::CONNECT_FAILED, ctx);
    if (e == nullptr) return;
    std::string_view peer = tokenAfter(msg, "Call to recv from ");
    if (peer.empty()) peer = tokenAfter(msg, "Call to send to ");
    if (peer.empty()) peer = tokenAfter(msg, "remote peer ");
    if (peer.empty()) peer = tokenAfter(msg, "Connect to ");
    e->set_peer(printable(peer, 256));
    e->set_status(errnoFromText(msg));
    return;
  }
  if (has(msg, "collective operation timeout") || has(msg, "Timeout(ms)") ||
      has(msg, "Watchdog caught")) {
    addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx);
    return;
  }
  addEvent(v1::NcclEvent::NCCL_ERROR, ctx);
}

void NcclLogParser::testsRankLine(std::string_view body) {
  // nccl-tests: "#  Rank  1 Group  0 Pid   4940 on ai-worker03 device  0 [0x61] NVIDIA L40",
  // older "#   Rank  1 Pid 2152176 on  dgxh100-3 device  0 ...".
  const auto tokens = splitWhitespace(body);
  if (tokens.size() < 6 || tokens[0] != "#" || tokens[1] != "Rank") return;
  const auto rank = parseInt(tokens[2]);
  if (!rank || *rank < 0 || *rank > 10'000'000) return;
  for (std::size_t i = 3; i + 1 < tokens.size(); ++i) {
    if (tokens[i] == "on") {
      addHost(tokens[i + 1]);
      break;
    }
  }
  tests_rank_max_ = std::max(tests_rank_max_, static_cast<int>(*rank));
}

// ncclResult_t as NCCL numbers it (nccl.h).
std::string_view ncclResultName(int64_t r) {
  switch (r) {
    case 1: return "ncclUnhandledCudaError";
    case 2: return "ncclSystemError";
    case 3: return "ncclInternalError";
    case 4: return "ncclInvalidArgument";
    case 5: return "ncclInvalidUsage";
    case 6: return "ncclRemoteError";
    case 7: return "ncclInProgress";
    default: return "";
  }
}

void NcclLogParser::chainLine(std::string_view site, std::optional<int64_t> result,
                              const LineContext& ctx) {
  // A propagation chain ("misc/socket.cc:567 -> 2", "bootstrap.cc:270 -> 2", "init.cc:1350
  // -> 2", ...) is one error travelling up a thread's stack: its first line names where it
  // started. One event per chain (host:pid and result), at its first line, attributed to the
  // cause: a socket or bootstrap site is a failed connection; the rest an NCCL error whose
  // ncclResult is decoded. A chain that follows a WARN of the same process is that WARN's
  // consequence and adds nothing.
  if (!result || *result <= 0) return;
  const std::string key = ctx.host + "|" + ctx.pid + "|" + std::to_string(*result);
  if (!chain_seen_.insert(key).second) return;
  if (warned_.count(ctx.host + "|" + ctx.pid) != 0) return;
  const bool connect = has(site, "socket.cc") || has(site, "bootstrap.cc") ||
                       has(site, "net_socket.cc") || has(site, "socket.h");
  const std::string_view name = ncclResultName(*result);
  const std::string op = name.empty() ? "ncclResult " + std::to_string(*result) : std::string(name);
  if (connect) {
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::CONNECT_FAILED, ctx)) {
      e->set_opcode_or_op(op);
      addHost(ctx.host);
    }
    return;
  }
  // Elsewhere ("proxy.cc:698 -> 6" on the peer of a failed rank) a chain is usually the echo
  // of an error another process printed: kept aside, and reported (the first one) only when
  // the log holds no other error.
  if (!pending_chain_) {
    pending_chain_.emplace();
    fillEvent(*pending_chain_, v1::NcclEvent::NCCL_ERROR, ctx)->set_opcode_or_op(op);
    pending_chain_host_ = ctx.host;
  }
}

void NcclLogParser::watchdogLine(std::string_view body, const LineContext& ctx) {
  // ProcessGroupNCCL: "[Rank 0] Watchdog caught collective operation timeout:
  // WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, ...) ran for 600061 milliseconds",
  // "[PG 1 Rank 0] Exception (...) detected by watchdog at work: 7753, last enqueued NCCL
  // work: 7755, last completed NCCL work: 7752."
  int rank = ctx.launcher_rank;
  if (auto r = intAfter(body, "Rank ")) rank = static_cast<int>(*r);
  std::optional<int64_t> seq = intAfter(body, "SeqNum=");
  const bool caught = has(body, "Watchdog caught");
  if (!caught)
    seq = has(body, "Timeout at NCCL work: ") ? intAfter(body, "Timeout at NCCL work: ")
                                              : intAfter(body, "at work: ");
  // PyTorch's heartbeat monitor: the watchdog itself made no progress (a NCCL/CUDA call
  // hung). One event per rank; the "watchdog got stuck" line that follows is the same event.
  const bool heartbeat = has(body, "Heartbeat monitor timed out");
  if (heartbeat || has(body, "watchdog got stuck for")) {
    if (heartbeat_seen_.insert(ctx.host + "|" + std::to_string(rank)).second) {
      if (v1::NcclEvent* e = addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx)) {
        e->set_rank(rank);
        e->set_opcode_or_op("heartbeat monitor");
        addHost(ctx.host);
      }
    }
    return;
  }
  if (caught) {
    if (v1::NcclEvent* e = addEvent(v1::NcclEvent::COLLECTIVE_TIMEOUT, ctx)) {
      e->set_rank(rank);
      if (seq && *seq >= 0) e->set_op_count(static_cast<uint64_t>(*seq));
      e->set_opcode_or_op(printable(tokenAfter(body, "OpType=", ",)"), 64));
    }
  }
  if (seq && *seq >= 0 && rank >= 0) {
    v1::NcclRankProgress& p = torch_progress_[{ctx.host, rank}];
    p.set_host(printable(ctx.host, 256));
    p.set_rank(rank);
    p.set_op_count(static_cast<uint64_t>(*seq));
    p.set_sequence(v1::NcclRankProgress::TORCH_SEQ_NUM);
    p.set_line_number(ctx.line_number);
    addHost(ctx.host);
  }
}

void NcclLogParser::otherLine(const Stripped& st, std::string_view raw, uint32_t n) {
  const std::string_view body = st.body;
  if (has(body, "NCCL version ")) setVersion(versionAt(body, "NCCL version "));
  if (version_.empty() && has(body, "RCCL version ")) setVersion(versionAt(body, "RCCL version "));
  if (startsWith(body, "#")) {
    testsRankLine(body);
    return;
  }
  const LineContext ctx = frameworkContext(st, raw, n);
  if (has(body, "Watchdog caught collective operation timeout") ||
      has(body, "detected by watchdog at work") || has(body, "Timeout at NCCL work: ") ||
      has(body, "Heartbeat monitor timed out") || has(body, "watchdog got stuck for")) {
    watchdogLine(body, ctx);
    return;
  }
  // Frameworks embed NCCL's last WARN. PyTorch (NCCLUtils) prints "...\nLast error:\n<text>",
  // so the text is on the next line; pasted one-liners have it inline: "ncclRemoteError: ...
  // Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, ...".
  if (const std::size_t last = body.find("Last error:"); last != std::string_view::npos) {
    const std::string_view tail = trim(body.substr(last + 11));
    if (tail.empty()) {
      pending_last_error_ = true;
      return;
    }
    lastErrorEvent(tail, ctx);
    return;
  }
  if (has(body, "ncclRemoteError") || has(body, "ncclSystemError") ||
      has(body, "ncclInternalError") || has(body, "ncclInvalidUsage") ||
      has(body, "unhandled system error") || has(body, "unhandled cuda error") ||
      has(body, "NCCL error") || has(body, "NCCL operations have failed")) {
    // The lines of one framework error message ("RuntimeError: NCCL error in: ...",
    // "ncclSystemError: System call ...") are one event.
    if (inFrameworkBlock(n)) return;
    if (addEvent(v1::NcclEvent::NCCL_ERROR, ctx) != nullptr) {
      addHost(ctx.host);
      framework_event_line_ = n;
    }
  }
}

bool NcclLogParser::inFrameworkBlock(uint32_t n) const {
  return framework_event_line_ > 0 && n - framework_event_line_ <= kFrameworkBlockLines &&
         !events_.empty() && events_.back().event.line_number() == framework_event_line_;
}

void NcclLogParser::lastErrorEvent(std::string_view text, const LineContext& ctx) {
  // The generic NCCL_ERROR of the same framework message is replaced by what NCCL said.
  if (inFrameworkBlock(ctx.line_number) &&
      events_.back().event.kind() == v1::NcclEvent::NCCL_ERROR) {
    events_.pop_back();
    --events_seen_;
  }
  framework_event_line_ = 0;
  const std::size_t before = events_.size();
  errorEvent(text, ctx);
  if (events_.size() > before) addHost(ctx.host);
}

v1::NcclLogSummary NcclLogParser::finish() {
  if (pending_chain_) {
    bool error = false;
    for (const auto& r : events_) {
      const Kind k = r.event.kind();
      error = error || k == v1::NcclEvent::IB_COMPLETION_ERROR ||
              k == v1::NcclEvent::IB_ASYNC_EVENT || k == v1::NcclEvent::REG_MR_FAILED ||
              k == v1::NcclEvent::CONNECT_FAILED || k == v1::NcclEvent::QP_SETUP_FAILED ||
              k == v1::NcclEvent::COLLECTIVE_TIMEOUT || k == v1::NcclEvent::NCCL_ERROR;
    }
    if (!error) {
      ++events_seen_;
      if (events_.size() < options_.max_events) {
        const uint32_t line = pending_chain_->event.line_number();
        auto at = std::find_if(events_.begin(), events_.end(), [line](const EventRecord& r) {
          return r.event.line_number() > line;
        });
        events_.insert(at, std::move(*pending_chain_));
        addHost(pending_chain_host_);
      } else {
        events_truncated_ = true;
      }
    }
  }
  v1::NcclLogSummary s;
  s.set_nccl_version(version_);
  for (const auto& h : hosts_.values()) s.add_hosts(h);
  std::string network;
  for (const auto& n : networks_.values()) {
    if (!network.empty()) network += ',';
    network += n;
  }
  s.set_network(network);
  for (const auto& d : ib_devices_.values()) s.add_ib_devices(d);
  for (const auto& i : socket_interfaces_.values()) s.add_socket_interfaces(i);
  for (const auto& t : transports_) {
    v1::NcclTransportUse* u = s.add_transports();
    u->set_transport(t.name);
    u->set_channel_lines(t.lines);
    u->set_gdr(t.gdr);
  }
  for (auto& r : events_) {
    if (r.event.rank() < 0) {
      auto it = rank_of_.find(r.rank_key);
      if (it != rank_of_.end()) {
        r.event.set_rank(it->second.rank);
      } else if (r.launcher_rank >= 0) {
        r.event.set_rank(r.launcher_rank);
      }
    }
    *s.add_events() = std::move(r.event);
  }
  s.set_events_truncated(events_truncated_);

  std::vector<v1::NcclRankProgress> ranks;
  for (const auto& [key, p] : torch_progress_) ranks.push_back(p);
  for (const auto& [key, p] : coll_progress_) {
    if (p.comm_nranks != coll_nranks_) continue;  // only the largest communicator
    int rank = -1;
    if (auto c = comms_.find(p.comm_key); c != comms_.end()) {
      rank = c->second.rank;
    } else if (auto r = rank_of_.find(p.rank_key); r != rank_of_.end()) {
      rank = r->second.rank;
    }
    v1::NcclRankProgress& out = ranks.emplace_back();
    out.set_host(printable(p.host, 256));
    out.set_rank(rank);
    out.set_op_count(p.op_count);
    out.set_sequence(v1::NcclRankProgress::NCCL_OP_COUNT);
    out.set_line_number(p.line_number);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
    return std::make_pair(a.rank(), a.host()) < std::make_pair(b.rank(), b.host());
  });
  for (auto& r : ranks) *s.add_ranks() = std::move(r);

  int nranks = init_nranks_;
  if (nranks <= 0) {
    nranks = std::max({coll_nranks_, ring_nranks_, tests_rank_max_ + 1, channel_rank_max_ + 1});
  }
  s.set_nranks(nranks > 0 ? nranks : -1);
  s.set_lines_total(lines_total_);
  s.set_lines_nccl(lines_nccl_);
  for (const auto& e : env_settings_.values()) s.add_env_settings(e);
  return s;
}

}  // namespace

v1::NcclLogSummary parseNcclLog(std::string_view text, const NcclLogOptions& options) {
  NcclLogParser parser(options);
  forEachLine(text, [&](std::string_view line, uint32_t n) { parser.line(line, n); });
  return parser.finish();
}

v1::NcclLogSummary mergeNcclLogs(std::span<const v1::NcclLogSummary> parts,
                                 std::size_t max_events) {
  v1::NcclLogSummary out;
  OrderedSet hosts;
  OrderedSet networks;
  OrderedSet ib_devices;
  OrderedSet socket_interfaces;
  OrderedSet env_settings;
  std::vector<TransportUse> transports;
  // (rank, host, sequence): an opCount and a SeqNum of one rank are different counts.
  std::map<std::tuple<int, std::string, int>, v1::NcclRankProgress> ranks;
  std::vector<v1::NcclRankProgress> unranked;
  int nranks = -1;
  bool truncated = false;
  for (const auto& p : parts) {
    if (out.nccl_version().empty()) out.set_nccl_version(p.nccl_version());
    for (const auto& h : p.hosts()) hosts.add(h);
    for (std::string_view n : split(p.network(), ',')) networks.add(std::string(n));
    for (const auto& d : p.ib_devices()) ib_devices.add(d);
    for (const auto& i : p.socket_interfaces()) socket_interfaces.add(i);
    for (const auto& e : p.env_settings()) env_settings.add(e);
    for (const auto& t : p.transports()) {
      auto it = std::find_if(transports.begin(), transports.end(),
                             [&t](const TransportUse& u) { return u.name == t.transport(); });
      if (it == transports.end()) {
        transports.push_back({t.transport(), 0, false});
        it = transports.end() - 1;
      }
      it->lines += t.channel_lines();
      it->gdr = it->gdr || t.gdr();
    }
    for (const auto& e : p.events()) {
      if (static_cast<std::size_t>(out.events_size()) >= max_events) {
        truncated = true;
        break;
      }
      *out.add_events() = e;
    }
    truncated = truncated || p.events_truncated();
    for (const auto& r : p.ranks()) {
      if (r.rank() < 0) {
        unranked.push_back(r);
        continue;
      }
      auto [it, inserted] =
          ranks.try_emplace({r.rank(), r.host(), static_cast<int>(r.sequence())}, r);
      if (!inserted && r.op_count() > it->second.op_count()) it->second = r;
    }
    nranks = std::max(nranks, p.nranks());
    out.set_lines_total(out.lines_total() + p.lines_total());
    out.set_lines_nccl(out.lines_nccl() + p.lines_nccl());
  }
  for (const auto& h : hosts.values()) out.add_hosts(h);
  std::string network;
  for (const auto& n : networks.values()) {
    if (!network.empty()) network += ',';
    network += n;
  }
  out.set_network(network);
  for (const auto& d : ib_devices.values()) out.add_ib_devices(d);
  for (const auto& i : socket_interfaces.values()) out.add_socket_interfaces(i);
  for (const auto& e : env_settings.values()) out.add_env_settings(e);
  for (const auto& t : transports) {
    v1::NcclTransportUse* u = out.add_transports();
    u->set_transport(t.name);
    u->set_channel_lines(t.lines);
    u->set_gdr(t.gdr);
  }
  for (const auto& r : unranked) *out.add_ranks() = r;
  for (const auto& [key, r] : ranks) *out.add_ranks() = r;
  out.set_nranks(nranks);
  out.set_events_truncated(truncated);
  return out;
}

std::string formatRankProgress(v1::NcclRankProgress::Sequence sequence, uint64_t value) {
  char buf[48];
  if (sequence == v1::NcclRankProgress::TORCH_SEQ_NUM) {
    std::snprintf(buf, sizeof buf, "SeqNum %llu", static_cast<unsigned long long>(value));
  } else {
    std::snprintf(buf, sizeof buf, "opCount %llx", static_cast<unsigned long long>(value));
  }
  return buf;
}

std::string_view ncclEventKindName(v1::NcclEvent::Kind kind) {
  switch (kind) {
    case v1::NcclEvent::IB_NO_DEVICE: return "IB_NO_DEVICE";
    case v1::NcclEvent::IB_DISABLED_BY_ENV: return "IB_DISABLED_BY_ENV";
    case v1::NcclEvent::IBVERBS_MISSING: return "IBVERBS_MISSING";
    case v1::NcclEvent::GDR_DISABLED: return "GDR_DISABLED";
    case v1::NcclEvent::IB_COMPLETION_ERROR: return "IB_COMPLETION_ERROR";
    case v1::NcclEvent::IB_ASYNC_EVENT: return "IB_ASYNC_EVENT";
    case v1::NcclEvent::REG_MR_FAILED: return "REG_MR_FAILED";
    case v1::NcclEvent::CONNECT_FAILED: return "CONNECT_FAILED";
    case v1::NcclEvent::QP_SETUP_FAILED: return "QP_SETUP_FAILED";
    case v1::NcclEvent::COLLECTIVE_TIMEOUT: return "COLLECTIVE_TIMEOUT";
    case v1::NcclEvent::SOCKET_TRANSPORT: return "SOCKET_TRANSPORT";
    case v1::NcclEvent::NCCL_ERROR: return "NCCL_ERROR";
    case v1::NcclEvent::IB_OPEN_FAILED: return "IB_OPEN_FAILED";
    default: return "KIND_UNSPECIFIED";
  }
}

}  // namespace ibc::core
