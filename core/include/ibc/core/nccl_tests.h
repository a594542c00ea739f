#pragma once

// Parser for nccl-tests / rccl-tests output (all_reduce_perf, alltoall_perf, ...). Pure:
// takes the captured text, returns NcclTestsResult (docs/codes.md NCCL_TEST_WRONG_RESULTS,
// NCCL_TEST_LOW_BUSBW).
//
// Table formats (the column header decides the mapping when present):
//   modern  size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong
//   legacy  size count type redop       time algbw busbw error   time algbw busbw error
//           (also without redop and/or with root; header with or without leading '#')
// Row values as printed: sizes in bytes, time in µs, algbw/busbw in GB/s. "#wrong" is an
// element count, "N/A" when validation is off (→ -1); the legacy "error" column is a float
// max error or "N/A". A trailing '*' marks an error over the threshold (over_threshold).
// alltoall prints an empty redop column in the legacy format; the row then has one token
// fewer and is still parsed.
//
// Also read: "# nThread 1 nGpus 8 ... validation: 0" (validation_off), "# Using devices" rank
// lines "#  Rank  0 Group  0 Pid 6899 on HOST device 0 ..." (nranks = highest rank + 1,
// hosts in order), footers "# Out of bounds values : 0 OK|FAILED", "# Avg bus bandwidth :
// 70.742", "# Errors with asterisks ...", "# Collective test starting|concluded: NAME".
// test_name comes from those footers, else from a command line in the text naming a
// "*_perf" binary ("/opt/nccl-tests/build/all_reduce_perf -b 8 ..."); empty if none.
// Rows may be interleaved with other output (NCCL INFO lines) and carry launcher prefixes
// (pdsh "host: ", mpirun "[1,0]<stdout>:", srun "0: "). Without a header, validation_off is
// set when every row's out-of-place check column is N/A.
//
// lines_unparsed counts non-blank lines that are neither table rows, headers nor '#'
// comments (e.g. interleaved NCCL INFO lines, a cut-off header tail, a truncated row) — and,
// because the schema has no truncation flag, rows beyond `max_rows`.
// format is "modern" (#wrong columns) or "legacy" (error columns), "" when no row or header.
// Never fails; an empty or garbage input gives no rows, nranks -1. No shared state.

#include <cstddef>
#include <string_view>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

struct NcclTestsOptions {
  // Rows kept; a real run prints well under a hundred.
  std::size_t max_rows = 10000;
};

v1::NcclTestsResult parseNcclTests(std::string_view text, const NcclTestsOptions& options = {});

}  // namespace ibc::core
