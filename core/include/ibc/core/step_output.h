#pragma once

// How a job step sends its snapshot back over the launcher's channel (srun or ssh
// stdout, no shared filesystem). srun merges the lines of all tasks, so every line is
// self-describing and text-only:
//
//   IBCSTEP1 <node> <seq>/<count> <base64 chunk>
//   IBCSTEP1 <node> end <sha256-hex of the envelope bytes>
//   IBCSTEP1 <node> error <message>            (the step could not collect)
//
// Every line stays under 1,000 bytes (srun --label splits longer lines); lines from
// different nodes may interleave, chunks are numbered so their order does not matter. Anything else
// on the channel (srun's own notices, a task label "0: ") is ignored.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"

namespace ibc::core {

inline constexpr std::string_view kStepMagic = "IBCSTEP1";

// The lines a step prints for one envelope (each ends with '\n').
std::vector<std::string> encodeStepOutput(std::string_view node, std::string_view envelope_bytes);
std::string encodeStepError(std::string_view node, std::string_view message);

// Reassembles envelopes from the launcher's output, line by line.
class StepOutputCollector {
 public:
  // Feeds one line (without '\n'); returns the node name when this line completed a
  // node's envelope (or its error), else "".
  std::string addLine(std::string_view line);

  struct NodeResult {
    bool complete = false;
    std::string envelope;  // decoded bytes, when complete and the digest matched
    std::string error;     // the step's own error, or why reassembly failed
  };
  const std::map<std::string, NodeResult>& results() const { return results_; }
  // Nodes that started sending but did not finish.
  std::vector<std::string> incomplete() const;
  uint64_t ignoredLines() const { return ignored_; }

 private:
  struct Partial {
    std::vector<std::string> chunks;
    uint32_t expected = 0;
    uint32_t received = 0;
  };
  std::map<std::string, Partial> partial_;
  std::map<std::string, NodeResult> results_;
  uint64_t ignored_ = 0;
};

}  // namespace ibc::core
