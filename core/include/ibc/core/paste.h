#pragma once

// What text picks up on its way from a tool to us, taken off before any parser reads it:
// one layer the line parsers go through (tool outputs, nccl-tests tables, kernel logs, NCCL
// logs), recognising each addition by its shape, never by a list of programs:
//   - a log collapsed into one line with literal "\n" (a JSON field, a chat message);
//   - CRLF line ends, ANSI colour/cursor sequences, HTML tags and entities;
//   - markdown/mail quoting ("> ", nested, ">>");
//   - line-number gutters (`cat -n`, `nl`, `grep -n`) on every line;
//   - launcher and logger prefixes: `[0] `, `[rank3]: `, Open MPI's `[1,3]<stdout>:`,
//     srun --label `3: ` (on every line), a host prefix (`node12: ` on every line, pdsh);
//   - timestamps: ISO 8601 (`2024-05-01T12:00:00.123Z`, `2024-05-01 12:00:00,123`),
//     syslog (`May  1 12:00:00 host prog[pid]: `), journal short-iso, bracketed forms.
// Nothing is thrown away: each logical line keeps the rank, host, pid and time it carried and
// the line of the input it came from. Kinds whose meaning belongs to a parser (the kernel's
// own `[  12.345678]` stamp, NCCL's `host:pid:tid` prefix) are left for that parser.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ibc::core {

struct PasteLine {
  std::string text;          // the line as the tool printed it
  uint32_t source_line = 0;  // 1-based line of the input (after a collapsed log is expanded)
  std::string rank;          // "3" from [3], [rank3]:, [1,3]<stdout>:, srun's "3: "
  std::string host;          // from a host prefix or a syslog/journal line
  std::string pid;           // from a syslog/journal "prog[pid]:"
  std::string time;          // the timestamp as printed
};

struct PasteOptions {
  // Take off line prefixes at all (false: only a collapsed log, CR, ANSI and quoting, for
  // parsers that read the prefixes themselves, as the NCCL log parser does).
  bool prefixes = true;
  // Take off timestamps and syslog/journal prefixes (false for kernel logs, whose parser
  // reads its own time formats).
  bool timestamps = true;
  // Take off a host prefix found on every line (false where `word: ` is the data's own
  // shape).
  bool host_prefix = true;
};

// A log collapsed into one line (literal "\n" between its lines: at least 3, and more of
// them than real line ends, which a wrapper around the string may add) expanded back into lines;
// literal "\t" becomes a tab and `\"` a quote there. Any other text is returned unchanged.
std::string expandCollapsedLines(std::string_view text);

// ANSI escape sequences (CSI "ESC [ ... letter" and two-byte "ESC x") taken out of a line.
std::string withoutAnsi(std::string_view line);

// HTML a paste picked up from a ticket or a web page taken out of a line: formatting tags
// (<pre>, <code>, <br>, <span style="...">, ...) and the entities &lt; &gt; &amp; &quot;.
// Upper-case words and numbers in brackets are data, never tags ("<BROADCAST,UP>",
// "10.0.0.1<4000>").
std::string withoutHtml(std::string_view line);

// Every line of `text` with what a paste added taken off (see above).
std::vector<PasteLine> readPaste(std::string_view text, const PasteOptions& options = {});

// Lines a terminal or a mail client wrapped, joined back. A paste is wrapped when its
// longest lines end at one column: several exactly at it (a terminal cuts mid-word: the rest
// is joined as it is) or, at 60 to 80 columns, several within a few of it (a mail client cuts
// at a blank: the rest is joined after one blank). A line is joined to the one before when
// that one reached the wrap (a terminal: the column; mail: half of it) and
// `starts_record(line)` says the line does not begin a record of its own (the parser knows
// what its records look like); at most 8 pieces make one line, which keeps the first
// piece's source_line. Text that is not wrapped is returned as it is.
std::vector<PasteLine> rejoinWrapped(std::vector<PasteLine> lines,
                                     const std::function<bool(std::string_view)>& starts_record);

// readPaste's lines joined with '\n': what a line parser reads.
std::string pasteText(std::string_view text, const PasteOptions& options = {});

}  // namespace ibc::core
