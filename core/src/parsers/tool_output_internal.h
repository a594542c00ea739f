#pragma once

// Private to the tool-output parsers (tool_output_*.cpp): the line cursor, the evidence
// builder that merges what block parsers find, and the block parsers themselves.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibc/core/tool_output.h"

namespace ibc::core::tool_output {

// Walks a text line by line without materialising a vector of lines (a 50 MB paste of
// newlines must not cost gigabytes). Copyable: a copy is a look-ahead.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text);
  bool atEnd() const { return pos_ >= text_.size(); }
  // Current line without its '\n' (and without a trailing '\r').
  std::string_view line() const { return line_; }
  // 1-based number of the current line.
  uint64_t number() const { return number_; }
  void next();

 private:
  void load();
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t next_ = 0;
  uint64_t number_ = 1;
  std::string_view line_;
};

// Context a command line gives to the output after it.
struct CommandContext {
  std::string tool;               // basename of the command ("ethtool", "ibstat", ...)
  std::string ethtool_stats_dev;  // from `ethtool -S DEV`, until a block uses it
  std::string ethtool_info_dev;   // from `ethtool -i DEV`
  bool ethtool_stats_pending = false;
  bool ethtool_info_pending = false;
  // The words of a perftest command ("ib_write_bw", "-d", "mlx5_0", ...), until a run uses
  // them; empty for other tools.
  std::vector<std::string> perftest_words;
};

// Accumulates evidence; block parsers hand it whole messages, it merges and bounds them.
class EvidenceBuilder {
 public:
  // Merges `device` (with its ports) under its name; `kind` is added to seen_in.
  void addDevice(v1::RdmaDevice device, std::string_view kind);
  void addNetdev(v1::NetDevice netdev);
  void addSysfsEntry(std::string_view path, std::string_view value);
  void addDriverInfo(EthtoolDriverInfo info);
  void addError(std::string_view line);
  void addRdmaTest(v1::RdmaTest test);
  void addGpuTopology(v1::GpuTopology topology);
  void addKind(std::string_view kind);
  void setNoRdmaDevices() { ev_.no_rdma_devices = true; }
  void markTruncated() { ev_.truncated = true; }
  void addSpan(std::string_view kind, uint64_t first, uint64_t last);
  // Counts `n` lines; unrecognised ones also stop the next span joining the previous one.
  void countLines(uint64_t n, bool unrecognised);

  CommandContext& context() { return ctx_; }
  ToolEvidence finish() &&;

 private:
  struct DeviceSlot {
    std::unordered_map<uint32_t, int> ports;  // port number → index in ports()
  };
  void mergeDevice(v1::RdmaDevice& dst, DeviceSlot& slot, v1::RdmaDevice& src);
  void mergePort(v1::RdmaPort& dst, v1::RdmaPort& src);
  void mergeNetdev(v1::NetDevice& dst, v1::NetDevice& src);
  void mergeCounters(google::protobuf::RepeatedPtrField<v1::Counter>* dst,
                     google::protobuf::RepeatedPtrField<v1::Counter>* src);
  void mergeStrings(google::protobuf::RepeatedPtrField<std::string>* dst,
                    const google::protobuf::RepeatedPtrField<std::string>& src, std::size_t limit);

  ToolEvidence ev_;
  CommandContext ctx_;
  bool joinable_ = false;
  std::size_t counters_total_ = 0;
  std::vector<DeviceSlot> device_slots_;
  std::unordered_map<std::string, std::size_t> device_index_;
  std::unordered_map<std::string, std::size_t> netdev_index_;
};

// A block parser looks at the cursor's current line. When a block of its kind starts
// there it consumes it (advancing the cursor past the last line of the block), records
// the evidence and returns true; otherwise it leaves the cursor alone and returns false.
using BlockParser = bool (*)(LineCursor& cursor, EvidenceBuilder& out);

struct BlockParserEntry {
  std::string_view kind;  // empty for the shared error-line parser
  BlockParser parse;
};

bool parseIbstatBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseIbstatusBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseIbvDevinfoBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parsePerfqueryBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseIbportstateBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseIbdev2netdevBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseRdmaLinkBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseEthtoolStatsBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseEthtoolInfoBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseIpLinkBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseSysfsListingBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parsePerftestBlock(LineCursor& cursor, EvidenceBuilder& out);
bool parseNvidiaSmiTopoBlock(LineCursor& cursor, EvidenceBuilder& out);
// "ib_write_bw", "ib_send_lat", "raw_ethernet_bw": a perftest program's name.
bool isPerftestTool(std::string_view word);
// Error lines no tool block claims: ibpanic/iberror, libibverbs warnings, ethtool
// "Cannot ..." and similar. Adds no kind.
bool parseErrorLine(LineCursor& cursor, EvidenceBuilder& out);

// Runs `parsers` (in priority order) over `text`, handling noise and command lines.
ToolEvidence runBlockParsers(std::string_view text, const std::vector<BlockParserEntry>& parsers);

// ---- helpers shared by the block parsers -------------------------------------------------

bool isIndented(std::string_view line);
bool isBlank(std::string_view line);
// "Key: value" → {trimmed key, trimmed value}; nullopt without ':'.
struct KeyValue {
  std::string_view key;
  std::string_view value;
};
std::optional<KeyValue> splitKeyValue(std::string_view line);
// infiniband-diags "Key:.......value" (libibmad mad_dump_field). Key is [A-Za-z][A-Za-z0-9_]*;
// with `allow_no_dots` a key of 31+ characters (which libibmad prints without dots) passes
// without dots.
std::optional<KeyValue> splitDotted(std::string_view line, bool allow_no_dots);
// Text between the first pair of single quotes ("CA 'mlx5_0'" → "mlx5_0").
std::optional<std::string_view> quoted(std::string_view text);
// A whole-field unsigned decimal that fits in 32 bits.
std::optional<uint32_t> parseU32(std::string_view text);
// Decimal digits only, no sign, no hex ("ethtool -S" values).
bool isDecimal(std::string_view text);
// "0000:05:00.0".
bool looksLikePciAddress(std::string_view s);
// The line without an annotation its paster added after the data: an arrow ("State: Down
// <----"), a "// note", or a note in another script ("rx_discards_phy: 12  \u4e22\u5305"). The "#
// comment" form is handled by unwrapPasteMarkup. Tool output itself is ASCII.
std::string_view withoutAnnotation(std::string_view line);
// "...", "[...]", "(...)", "\u2026": a paster's mark for lines left out. Noise, never data.
bool isElision(std::string_view line);
// Keeps at most kMaxToolLineBytes bytes.
std::string boundedLine(std::string_view line);
// The Gb/s the kernel reports for one lane of a link whose lane signals at `lane_gbps`
// (14.0625 → 14, 25.78125 → 25, 53.125 → 50); other values unchanged.
double nominalLaneGbps(double lane_gbps);
// "SDR".."XDR" for a nominal lane speed (FDR10 for 10.3125 signalling); empty if unknown.
std::string_view speedNameForLane(double lane_gbps);
// Sets state/phys_state-style EnumValue from text printed without a number ("Active").
v1::EnumValue namedEnum(std::string_view text);

}  // namespace ibc::core::tool_output
