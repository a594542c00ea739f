// Private to the NCCL log parser, whose three parts share it: line location
// (nccl_log_lines.cpp: NCCL's lines found in mangled text), event classifiers
// (nccl_log_events.cpp: what each line means) and summary (nccl_log.cpp: the parser's result
// and the public functions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ibc/core/nccl_log.h"
#include "ibc/core/text.h"

namespace ibc::core::nccl_log_internal {

using Kind = v1::NcclEvent::Kind;

constexpr std::size_t kMaxEventText = 1024;

inline bool isDigit(char c) { return c >= '0' && c <= '9'; }
inline bool has(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// ---- Line location (nccl_log_lines.cpp) ----

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

// `s` read as a debug line from its first character: nullopt when it is not one.
std::optional<DebugLine> parseDebugLine(std::string_view s);

// The debug line wherever it starts in `s`, whatever precedes it (timestamps of any format,
// log collectors' and container runtimes' prefixes, launcher tags, markdown, line numbers,
// colour residue): found by its own shape, "host:pid[:tid] [dev] ... NCCL LEVEL", never by a
// list of known prefixes. Candidates are the "[dev] " brackets after a space; each is tried
// with the host token that ends right before it. Bounded work per line: at most
// kMaxCandidates brackets are tried, each parse stops at the level marker.
std::optional<std::pair<std::size_t, DebugLine>> findDebugLine(std::string_view s);

// Sites that route NCCL's debug output through their own logger print its fields in brackets
// right before the level: "[training-pod2-1][1982595:1982762][0][rings.cc:19] NCCL INFO ...",
// "[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN
// ...". Read by the fields' own shapes (a host, "pid:tid" or "host:pid=N", a device number, a
// call site; timestamps and counters are skipped), never by a list of formats. A host and a pid
// are required. Returns where the first field starts. Bounded: one marker, at most 8 fields.
std::optional<std::pair<std::size_t, DebugLine>> findBracketedDebugLine(std::string_view s);

// A launcher's rank tag anywhere in the text before a debug line found by its shape (a
// timestamp may come first): Open MPI "[1,3]<stdout>:", torchrun "[rank3]:" / "[default3]:",
// srun "3: " as the last word. -1 when none.
int rankInPrefix(std::string_view prefix);

// A line without the launcher's and collectors' prefixes in front of it: the pdsh host and the
// launcher rank they named, if any.
struct Stripped {
  std::string_view body;
  std::string_view pdsh_host;
  int launcher_rank = -1;
};

Stripped stripLauncherPrefixes(std::string_view line);

// Whether `line` begins a record of a log of its own (never the rest of a wrapped line): it
// carries a launcher, host or time prefix, or is an NCCL INFO/WARN line.
bool startsNcclRecord(std::string_view line);

// ---- The parser: event classifiers (nccl_log_events.cpp), summary (nccl_log.cpp) ----

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

inline std::string key3(std::string_view a, std::string_view b, std::string_view c) {
  std::string k;
  k.reserve(a.size() + b.size() + c.size() + 2);
  k.append(a).push_back('|');
  k.append(b).push_back('|');
  k.append(c);
  return k;
}

// Reads one log line by line (line()), then gives its summary (finish(), once).
class NcclLogParser {
 public:
  explicit NcclLogParser(const NcclLogOptions& options) : options_(options) {}

  // One line of the log: located (line location), then classified.
  void line(std::string_view raw, uint32_t n);

  v1::NcclLogSummary finish();

 private:
  void addHost(std::string_view host) {
    if (!host.empty()) hosts_.add(printable(host, 256));
  }

  void setVersion(std::string version) {
    if (version_.empty()) version_ = std::move(version);
  }

  void debugLine(const DebugLine& d, const Stripped& st, std::string_view raw, uint32_t n);

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
  // NCCL's RAS report (nccl_log_ras.cpp): the ranks' operation counts it lists, and where
  // its MISMATCH block is (the collective counted, the group the next "Rank N --" lines are).
  bool rasLine(std::string_view body, uint32_t n);
  std::vector<v1::NcclRankProgress> ras_progress_;
  std::string ras_collective_;
  std::optional<uint64_t> ras_group_op_;
  std::optional<std::size_t> ras_group_entry_;  // the group's unnamed entry, until a rank is named
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

}  // namespace ibc::core::nccl_log_internal
