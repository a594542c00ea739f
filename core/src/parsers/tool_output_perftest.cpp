// perftest output (linux-rdma/perftest: ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw and
// the _lat tests), as a run prints it or its `--out_json` file holds it. Shapes, from perftest
// 4.5's own format strings (Debian's perftest 4.5+0.17):
//
//   ************************************
//   * Waiting for client to connect... *            (the server)
//   ************************************
//   ---------------------------------------------------------------------------------------
//                       RDMA_Write BW Test
//    Dual-port       : OFF          Device         : mlx5_0
//    Link type       : IB           ...
//    local address: LID 0x07 QPN 0x0131 PSN 0x6f3c3d RKey 0x1fff00 VAddr 0x007f0b1b1b1000
//    GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:02     (RoCE)
//    #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
//    65536      5000             11794.38            11793.49              0.188696
//
// "MB/sec" is MiB/s: perftest divides bytes/s by 0x100000 (its --help: "MiB=2^20 byte, while
// Gb=10^9 bits"); with --report_gbits the header says Gb/sec and the divisor is 125000000.
// The JSON file repeats the numbers without a unit (`BW_average: 11.26,`, keys unquoted), so
// its unit is the command line's (--report_gbits or not) or, without one, unknown.

#include <algorithm>
#include <array>
#include <cctype>

#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "tool_output_internal.h"

namespace ibc::core::tool_output {

namespace {

enum class Shape {
  Dashes,        // "-----..." perftest's separators
  Stars,         // "*****..." around the server's banner
  Banner,        // "* Waiting for client to connect... *"
  Title,         // "RDMA_Write BW Test"
  Address,       // " local address: LID ...", " remote address: ..."
  Gid,           // " GID: 00:00:..."
  ResultHeader,  // " #bytes     #iterations    BW peak[MB/sec] ..."
  Row,           // numbers
  Cuda,          // --use_cuda's chatter ("initializing CUDA", "allocated GPU buffer ...")
  Note,          // perftest's warnings and remarks ("Changing to active mtu - 1024")
  Error,         // "Couldn't connect to ...", "Unable to ...", "Failed to ..."
  JsonStart,     // "{" or "test_info: {" of an --out_json file
  Setting,       // " Dual-port       : OFF" (only within a run)
  Other,
};

bool allOf(std::string_view t, char c, std::size_t min) {
  return t.size() >= min && std::all_of(t.begin(), t.end(), [c](char x) { return x == c; });
}

bool isNumberWord(std::string_view w) {
  return !w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && parseDouble(w);
}

bool isTitle(std::string_view t) {
  return t.size() < 80 && (endsWith(t, "BW Test") || endsWith(t, "Latency Test") ||
                           endsWith(t, "Lat Test") || endsWith(t, "BW Test Bidirectional"));
}

// Lines only perftest prints: they start a run without its command line or title.
bool isPerftestSignature(std::string_view t) {
  static constexpr std::array<std::string_view, 7> kStarts{
      {"Unable to find the Infiniband/RoCE device", "Did not detect devices",
       "Unable to Connect the HCA's through the link", "Completion with error at ",
       "Failed to complete run_iter_bw", "Unable to init the socket connection",
       "Failed to modify QP"}};
  return std::any_of(kStarts.begin(), kStarts.end(),
                     [&](std::string_view s) { return startsWith(t, s); });
}

bool isErrorLine(std::string_view t) {
  static constexpr std::array<std::string_view, 17> kStarts{{
      "Couldn't",
      "Couldnt",
      "Unable to",
      "Failed to",
      "Failed status",
      "Completion with error",
      "Problems with warm up",
      "Error",
      "ERROR",
      "ethernet_read_keys",
      "Received ",
      "Client Write/Read",
      "IB device",
      "No IB devices",
      "Did not detect devices",
      "If device exists, check if driver is up",
      "scnt=",
  }};
  if (std::any_of(kStarts.begin(), kStarts.end(),
                  [&](std::string_view s) { return startsWith(t, s); }))
    return true;
  // " Port number 1 state is Down", "mlx5: node: got completion with error:"
  return (startsWith(t, "Port number") && t.find(" state is ") != std::string_view::npos) ||
         t.find("got completion with error") != std::string_view::npos ||
         t.find("ibv_modify_qp failed") != std::string_view::npos;
}

bool isNoteLine(std::string_view t) {
  static constexpr std::array<std::string_view, 16> kStarts{
      {"WARNING", "Warning", "Conflicting CPU frequency", "CPU Frequency is not max",
       "Requested mtu", "Changing to", "Will run with", "Max msg size", "Test with events",
       "Post List requested", "Perftest doesn't", "Please run the same command",
       "Waiting for client rdma_cm", "Measurements", "Connected:", "Using sampled CPU speed"}};
  return std::any_of(kStarts.begin(), kStarts.end(),
                     [&](std::string_view s) { return startsWith(t, s); });
}

bool isCudaLine(std::string_view t) {
  return t.find("CUDA") != std::string_view::npos ||
         t.find("GPU buffer") != std::string_view::npos || startsWith(t, "[pid = ") ||
         startsWith(t, "Picking device") || startsWith(t, "cuMemAlloc") ||
         startsWith(t, "Using cuda") || startsWith(t, "Using CUDA");
}

bool isSettingLine(std::string_view t) {
  // " Dual-port       : OFF", "ibv_wr* API     : ON", "rdma_cm QPs\t : OFF"
  const auto colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 24) return false;
  if (!std::isalpha(static_cast<unsigned char>(t[0]))) return false;
  return std::all_of(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '\t' || c == '-' ||
           c == '_' || c == '.' || c == '*' || c == '(' || c == ')';
  });
}

bool isJsonKeyLine(std::string_view t) {
  // `BW_average: 11.26,`, `"Device": "mlx5_0",`, `test_info: {`
  if (t == "{" || t == "}" || t == "}," || t == "{}") return true;
  std::string_view key = t.substr(0, t.find(':'));
  if (key.size() == t.size() || key.empty()) return false;
  key = trim(key);
  if (startsWith(key, "\"") && endsWith(key, "\"") && key.size() >= 2)
    key = key.substr(1, key.size() - 2);
  return !key.empty() && key.size() < 40 && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' ' || c == '.' ||
           c == '%';
  });
}

Shape shapeOf(std::string_view line, bool in_run, bool in_json) {
  const std::string_view t = trim(line);
  if (in_json && isJsonKeyLine(t)) return Shape::JsonStart;
  if (allOf(t, '-', 10)) return Shape::Dashes;
  if (allOf(t, '*', 10)) return Shape::Stars;
  if (startsWith(t, "*") && t.find("Waiting for client") != std::string_view::npos)
    return Shape::Banner;
  if (isTitle(t)) return Shape::Title;
  if (startsWith(t, "local address:") || startsWith(t, "remote address:")) return Shape::Address;
  if (startsWith(t, "GID:") || startsWith(t, "GID index"))
    return in_run ? Shape::Gid : Shape::Other;
  if (startsWith(t, "#bytes")) return Shape::ResultHeader;
  if (startsWith(t, "test_info") || t == "{") return Shape::JsonStart;
  if (isErrorLine(t)) return Shape::Error;
  if (isNoteLine(t)) return Shape::Note;
  if (isCudaLine(t)) return Shape::Cuda;
  const auto words = splitWhitespace(t);
  if (words.size() >= 3 && std::all_of(words.begin(), words.end(), isNumberWord)) return Shape::Row;
  if (in_run && isSettingLine(t)) return Shape::Setting;
  return Shape::Other;
}

// The header's columns: "#bytes", "#iterations", "BW peak[MB/sec]", ..., "99% percentile[usec]".
// perftest separates them by runs of blanks but writes some labels with one blank inside.
std::vector<std::string> headerColumns(std::string_view header) {
  std::vector<std::string> cols;
  std::string cur;
  const auto words = splitWhitespace(header);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!cur.empty()) cur += ' ';
    cur += std::string(words[i]);
    const bool ends = startsWith(words[i], "#") || words[i].find(']') != std::string_view::npos ||
                      i + 1 == words.size();
    if (ends) {
      cols.push_back(std::move(cur));
      cur.clear();
    }
  }
  return cols;
}

// "MB/sec" from "BW average[MB/sec]".
std::string unitOf(std::string_view column) {
  const auto open = column.find('[');
  const auto close = column.find(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
  return std::string(column.substr(open + 1, close - open - 1));
}

// Gb/s per one of the unit; 0 for a unit that is no bandwidth.
double gbpsPerUnit(std::string_view unit) {
  if (unit == "MB/sec" || unit == "MiB/sec" || unit == "MB/s" || unit == "MiB/s")
    return kPerftestMiBpsToGbps;
  if (unit == "Gb/sec" || unit == "Gbit/sec" || unit == "Gb/s" || unit == "Gbps") return 1.0;
  return 0;
}

// What the command line says about the run (ctx.perftest_words).
void applyCommandWords(const std::vector<std::string>& words, v1::RdmaTest& t, bool& report_gbits) {
  static constexpr std::array<std::string_view, 22> kValued{
      {"-d", "-i", "-s", "-n", "-D", "-p", "-m", "-x", "-q", "-t", "-r",
       "-Q", "-u", "-S", "-I", "-w", "-c", "-T", "-l", "-y", "-z", "-M"}};
  static constexpr std::array<std::string_view, 12> kLongValued{
      {"--ib-dev", "--ib-port", "--size", "--iters", "--duration", "--port", "--mtu", "--gid-index",
       "--qp", "--tx-depth", "--connection", "--source_ip"}};
  if (words.empty()) return;
  t.set_tool(printable(words.front(), 64));
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string_view name = std::string_view(w).substr(0, w.find('='));
    const bool has_eq = w.find('=') != std::string::npos;
    const std::string value =
        has_eq ? w.substr(w.find('=') + 1) : (i + 1 < words.size() ? words[i + 1] : std::string());
    const bool valued =
        std::find(kValued.begin(), kValued.end(), name) != kValued.end() ||
        std::find(kLongValued.begin(), kLongValued.end(), name) != kLongValued.end();
    if (name == "-d" || name == "--ib-dev") t.set_device(printable(value, 64));
    if (name == "-i" || name == "--ib-port") {
      if (const auto p = parseU32(value)) t.set_port(*p);
    }
    if (name == "-b" || name == "--bidirectional") t.set_bidirectional(true);
    if (name == "--report_gbits" || name == "--report-gbits") report_gbits = true;
    if (startsWith(name, "--use_cuda") || startsWith(name, "--use-cuda")) t.set_use_cuda(true);
    if (valued && !has_eq) {
      ++i;
    } else if (!startsWith(w, "-")) {
      t.set_role("client");
      t.set_peer(printable(w, 128));
    }
  }
  if (t.role().empty()) t.set_role("server");
}

// One run being read.
struct Run {
  v1::RdmaTest test;
  std::vector<std::string> columns;
  std::string unit;
  bool report_gbits = false;
  bool command_known = false;
  bool seen_title = false;
  bool has_rows = false;
  bool in_json = false;
  bool json_row_open = false;
  v1::RdmaTest json_row;
};

std::size_t columnIndex(const std::vector<std::string>& cols, std::string_view prefix) {
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (startsWith(cols[i], prefix)) return i;
  }
  return cols.size();
}

// Keeps the bandwidth row with the highest average; the first latency row.
void takeRow(Run& run, uint64_t size, double avg_raw, double peak_raw, double lat_typ,
             double lat_avg, const std::string& unit) {
  v1::RdmaTest& t = run.test;
  t.set_rows(t.rows() + 1);
  run.has_rows = true;
  if (avg_raw > 0) {
    const double f = gbpsPerUnit(unit);
    // The best row among those that fill a link, else the best of all.
    const bool fills = size >= kRdmaTestFillBytes;
    const bool kept_fills = t.size_bytes() >= kRdmaTestFillBytes;
    const bool better = fills != kept_fills ? fills : avg_raw > t.bw_average_raw();
    if (t.bw_average_raw() <= 0 || better) {
      t.set_size_bytes(size);
      t.set_bw_average_raw(avg_raw);
      t.set_bw_average_gbps(avg_raw * f);
      t.set_bw_peak_gbps(peak_raw * f);
      t.set_unit(unit);
    }
  } else if (t.rows() == 1 && (lat_typ > 0 || lat_avg > 0)) {
    t.set_size_bytes(size);
    t.set_lat_typical_us(lat_typ);
    t.set_lat_avg_us(lat_avg);
  }
}

void readRow(Run& run, std::string_view line) {
  const auto words = splitWhitespace(trim(line));
  const auto& cols = run.columns;
  auto at = [&](std::string_view prefix) -> double {
    const std::size_t i = columnIndex(cols, prefix);
    if (i >= cols.size() || i >= words.size()) return 0;
    return parseDouble(words[i]).value_or(0);
  };
  const uint64_t size = parseUnsigned(words.front()).value_or(0);
  if (cols.empty()) return;  // numbers without a header: their meaning is unknown
  const std::size_t avg = columnIndex(cols, "BW average");
  takeRow(run, size, at("BW average"), at("BW peak"), at("t_typical"), at("t_avg"),
          avg < cols.size() ? unitOf(cols[avg]) : std::string());
}

void readSetting(Run& run, std::string_view line) {
  // Two settings may share a line: "Dual-port : OFF\t\tDevice : mlx5_0".
  auto valueAfter = [&](std::string_view key) -> std::string_view {
    const auto k = line.find(key);
    if (k == std::string_view::npos) return {};
    const auto colon = line.find(':', k + key.size());
    if (colon == std::string_view::npos ||
        !trim(line.substr(k + key.size(), colon - k - key.size())).empty())
      return {};
    const auto words = splitWhitespace(line.substr(colon + 1));
    return words.empty() ? std::string_view{} : words.front();
  };
  if (const auto d = valueAfter("Device"); !d.empty() && run.test.device().empty())
    run.test.set_device(printable(d, 64));
  if (const auto l = valueAfter("Link type"); !l.empty()) run.test.set_link_type(printable(l, 32));
}

// `KEY: VALUE,` of the JSON file.
void readJsonLine(Run& run, std::string_view line) {
  const std::string_view t = trim(line);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view key = trim(t.substr(0, colon));
  std::string_view value = trim(t.substr(colon + 1));
  auto unquote = [](std::string_view s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    return s;
  };
  key = unquote(key);
  if (endsWith(value, ",")) value.remove_suffix(1);
  value = unquote(trim(value));
  v1::RdmaTest& row = run.json_row;
  if (key == "test") run.test.set_test(printable(value, 128));
  if (key == "Device") run.test.set_device(printable(value, 64));
  if (key == "Link_type") run.test.set_link_type(printable(value, 32));
  if (key == "MsgSize") {
    row = v1::RdmaTest{};
    row.set_size_bytes(parseUnsigned(value).value_or(0));
    run.json_row_open = true;
  }
  const double v = parseDouble(value).value_or(0);
  if (key == "BW_peak") row.set_bw_peak_gbps(v);  // raw until the unit is known
  if (key == "BW_average") row.set_bw_average_raw(v);
  if (key == "t_typical") row.set_lat_typical_us(v);
  if (key == "t_avg") row.set_lat_avg_us(v);
  const bool row_ends = key == "MsgRate" || key == "t_avg" || key == "tps_average";
  if (run.json_row_open && row_ends) {
    const std::string unit = run.command_known ? (run.report_gbits ? "Gb/sec" : "MB/sec") : "";
    takeRow(run, row.size_bytes(), row.bw_average_raw(), row.bw_peak_gbps(), row.lat_typical_us(),
            row.lat_avg_us(), unit);
    run.json_row_open = false;
  }
}

bool startsRun(const LineCursor& cursor, Shape s, bool perftest_command) {
  switch (s) {
    case Shape::Banner:
    case Shape::Title:
    case Shape::ResultHeader:
    case Shape::Address: return true;
    case Shape::JsonStart: {
      if (trim(cursor.line()) != "{" || perftest_command) return true;
      LineCursor ahead = cursor;  // "{" then "test_info: {"
      ahead.next();
      return !ahead.atEnd() && startsWith(trim(ahead.line()), "test_info");
    }
    case Shape::Dashes:
    case Shape::Stars: {
      if (perftest_command) return true;
      LineCursor ahead = cursor;
      ahead.next();
      const Shape n = ahead.atEnd() ? Shape::Other : shapeOf(ahead.line(), false, false);
      return n == Shape::Title || n == Shape::Banner || n == Shape::Address ||
             n == Shape::ResultHeader;
    }
    case Shape::Error: return perftest_command || isPerftestSignature(trim(cursor.line()));
    case Shape::Note:
    case Shape::Cuda:
    case Shape::Row: return perftest_command;
    default: return false;
  }
}

// One line of a run; false when the line ends it (the cursor stays on it).
bool readRunLine(Run& run, Shape s, std::string_view line, EvidenceBuilder& out) {
  const bool new_run = (s == Shape::Title || s == Shape::Banner || s == Shape::Stars) &&
                       (run.has_rows || !run.test.errors().empty());
  if (new_run) return false;
  switch (s) {
    case Shape::Banner: run.test.set_role("server"); break;
    case Shape::Title:
      run.test.set_test(printable(trim(line), 128));
      run.seen_title = true;
      if (line.find("Bidirectional") != std::string_view::npos) run.test.set_bidirectional(true);
      break;
    case Shape::ResultHeader: run.columns = headerColumns(trim(line)); break;
    case Shape::Row: readRow(run, line); break;
    case Shape::Setting: readSetting(run, line); break;
    case Shape::Cuda: run.test.set_use_cuda(true); break;
    case Shape::Error:
      if (static_cast<std::size_t>(run.test.errors_size()) < kMaxRdmaTestErrors)
        run.test.add_errors(boundedLine(trim(line)));
      out.addError(trim(line));
      break;
    case Shape::JsonStart:
      run.in_json = true;
      readJsonLine(run, line);
      break;
    case Shape::Other: return false;
    default: break;
  }
  return true;
}

}  // namespace

bool isPerftestTool(std::string_view word) {
  if (startsWith(word, "raw_ethernet_")) return true;
  if (!startsWith(word, "ib_") || !(endsWith(word, "_bw") || endsWith(word, "_lat"))) return false;
  const std::string_view verb = word.substr(3, word.rfind('_') - 3);
  return verb == "write" || verb == "read" || verb == "send" || verb == "atomic";
}

bool parsePerftestBlock(LineCursor& cursor, EvidenceBuilder& out) {
  CommandContext& ctx = out.context();
  const bool perftest_command = !ctx.perftest_words.empty();
  if (!startsRun(cursor, shapeOf(cursor.line(), false, false), perftest_command)) return false;
  Run run;
  run.test.set_first_line(cursor.number());
  run.command_known = perftest_command;
  applyCommandWords(ctx.perftest_words, run.test, run.report_gbits);
  ctx.perftest_words.clear();  // the next run needs its own command line
  while (!cursor.atEnd()) {
    const std::string_view line = cursor.line();
    if (isBlank(line)) {
      // A blank inside a run is kept when the run goes on after it.
      LineCursor ahead = cursor;
      ahead.next();
      const Shape n = ahead.atEnd() ? Shape::Other : shapeOf(ahead.line(), true, run.in_json);
      if (n == Shape::Other || n == Shape::Setting) break;
      cursor.next();
      continue;
    }
    const Shape s = shapeOf(line, run.seen_title || perftest_command, run.in_json);
    if (!readRunLine(run, s, line, out)) break;
    cursor.next();
  }
  out.addRdmaTest(std::move(run.test));
  return true;
}

}  // namespace ibc::core::tool_output
