#pragma once

// Prefixes that parallel launchers put in front of every line of a program's output, shared
// by the log parsers (kernel log, NCCL logs, nccl-tests). Pure functions over one line; the
// returned views point into the caller's line.
//
//   pdsh / clush   "node12: <line>"            (repeated when nested: "h: h: <line>")
//   srun --label   "3: <line>"                 (task id)
//   Open MPI       "[1,3]<stdout>:<line>"      (mpirun --tag-output: [jobid,rank])
//   torchrun       "[rank3]:<line>"            (PyTorch's per-rank log prefix)
//
// Whether "word: " is really a host prefix depends on what follows: "rdma_rxe: Failed
// sending ack" is a kernel message, not host "rdma_rxe". The parsers therefore decide with
// their own knowledge of the line format; these helpers only split.

#include <optional>
#include <string_view>

namespace ibc::core {

struct HostPrefix {
  std::string_view host;  // "node12", "10.0.87.143"
  std::string_view rest;  // the line after "host: "
};

// "node12: rest" → {node12, rest}. The token must be a hostname-like word (letters, digits,
// '.', '-', '_') immediately followed by ": ". An all-digit token is an srun task label, not
// a host: see splitTaskLabel. nullopt otherwise.
std::optional<HostPrefix> splitHostPrefix(std::string_view line);

struct RankPrefix {
  int rank = -1;
  std::string_view rest;
};

// srun --label "12: rest" → {12, rest}.
std::optional<RankPrefix> splitTaskLabel(std::string_view line);
// Open MPI --tag-output "[1,3]<stdout>:rest" or "<stderr>" → {3, rest}; one space after
// the colon is also removed.
std::optional<RankPrefix> splitMpiTag(std::string_view line);
// PyTorch "[rank3]:rest" → {3, rest}.
std::optional<RankPrefix> splitTorchRank(std::string_view line);

// True for a token that can be a host name (letters, digits, '.', '-', '_'; at least one
// letter or dot, so pure numbers are not hosts).
bool isHostnameToken(std::string_view token);

}  // namespace ibc::core
