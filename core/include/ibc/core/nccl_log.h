#pragma once

// Parser for NCCL_DEBUG=INFO/WARN output (NCCL 2.x) and the framework lines around it
// (PyTorch ProcessGroupNCCL, nccl-tests headers). Pure: takes the log text, returns the
// summary the snapshot stores (NcclLogSummary, docs/formats.md, docs/codes.md NCCL findings).
//
// Line shapes (behind any mix of pdsh/clush "host: " prefixes, possibly doubled, Open MPI
// "[1,0]<stdout>:" tags, srun "3: " labels, torchrun "[rank3]:" prefixes and NCCL's
// "[2026-03-13 22:26:02] " timestamps):
//   host:pid:tid [dev] NCCL INFO msg
//   host:pid:tid [dev] file.cc:123 NCCL WARN msg          (and "file.cc:123 (func) NCCL WARN")
//   host:pid [dev] file.cc:123 NCCL WARN msg              (pid redacted / tid missing)
//   NCCL version 2.7.8+cuda10.2                            (no host prefix)
//   #  Rank  1 Group  0 Pid 4940 on ai-worker03 device  0 ...   (nccl-tests)
//   [rank0]:[E1206 ...ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective ...
//   ... ncclRemoteError: ... Last error: NET/IB : Got completion from peer ... (one line)
// Host names are taken as printed (dots, dashes, "..." redactions).
// When no known prefix explains a line, the debug line is found by its own shape wherever it
// starts ("host:pid[:tid] [dev] ... NCCL INFO|WARN", or NCCL 2.0-2.2's bare "INFO"/"WARN"):
// behind any timestamps (ISO 8601, syslog, date-time-zone, several), container runtimes' and
// log collectors' prefixes, Python logging, markdown/HTML markup or line numbers; a launcher
// rank tag found before it ("[1,3]<stdout>:", "[rank3]:", "[default3]:", "3: ") still gives
// the rank. At most 8 candidates per line are tried: linear in the text.
//  * error propagation chains ("misc/socket.cc:567 -> 2", "bootstrap.cc:270 -> 2"): one
//    event per host:pid and ncclResult, opcode_or_op = the decoded result
//    ("ncclSystemError"; 2 system, 3 internal, 5 invalid usage, 6 remote). A chain through a
//    socket or bootstrap site is CONNECT_FAILED; another one (proxy.cc, init.cc) is an
//    NCCL_ERROR kept only when the log shows no other error (it is usually a peer's echo); a
//    chain of a process that printed a WARN is that WARN's consequence.
//  * PyTorch's heartbeat monitor ("Heartbeat monitor timed out!", "watchdog got stuck") is a
//    COLLECTIVE_TIMEOUT, one per host and rank; "Timeout at NCCL work: N" gives a SeqNum.
//
// What counts:
//  * transports: only channel/ring lines with "via" ("Channel 01/0 : 0[0] -> 1[0] [send] via
//    NET/IB/0/GDRDMA", 2.4's "Ring 00 : 0 -> 1 [send] via NET/Socket/0"). The bootstrap
//    "NET/Socket : Using [0]ib0:..." line is an interface list (socket_interfaces), never a
//    transport.
//  * events: one per WARN line (classified), plus configuration facts (no IB device, IB
//    disabled by NCCL_IB_DISABLE, libibverbs missing, GDR disabled — once per kind and host),
//    PyTorch watchdog timeouts, errors embedded in framework lines ("Last error: ..." inline,
//    or on the next line as PyTorch prints it; the lines of one framework message are one
//    event, classified by NCCL's last error when present), and
//    one SOCKET_TRANSPORT per host:pid whose channels or error stack go through NET/Socket.
//    Error propagation lines ("transport/net.cc:1137 -> 6") and "[Service thread] Connection
//    closed by localRank N" are consequences and never become events. Events keep file order;
//    the first `max_events` are kept (the first error is the root cause) and
//    events_truncated says more were seen.
//  * event fields: status = ibv_wc_status of a completion error, errno of QP/MR/socket
//    failures (from the number or the strerror text), else -1; vendor_err; peer as printed
//    ("10.0.35.1<49189>"); rdma_device "mlx5_1:1"; opcode_or_op = "Send"/"Recv" (or the
//    opcode when no direction is printed), the async event ("port error"), or PyTorch's
//    OpType; op_count = PyTorch SeqNum.
//  * rank of an event: the rank of the same host:pid:device from "comm 0x.. rank N nranks M"
//    (Init COMPLETE) lines or its [send]/[receive] channel lines, else the launcher prefix
//    ("[1,3]<stdout>:", "[rank3]:", srun "3: ", PyTorch "[Rank 3]"), else -1.
//  * ranks (progress): per rank, the last collective sequence number seen — the opCount of
//    NCCL_DEBUG_SUBSYS=COLL lines ("AllReduce: opCount 2a ... comm 0x.. [nranks=16]",
//    mapped to a rank through that comm's Init COMPLETE line; only the largest communicator
//    is reported), or the SeqNum of the work PyTorch's watchdog caught ("WorkNCCL(SeqNum=
//    7753, ...)", "... at work: 7753, last enqueued ..."). Sorted by rank; `sequence` says
//    which of the two a rank's count is.
//  * nranks: the largest "nranks"/"nRanks" of a communicator line when present, else the
//    largest of COLL "[nranks=M]", ring listings ("Channel 00/32 :    0   1"), nccl-tests
//    rank lines and (highest rank in channel lines + 1, a lower bound); -1 if none.
//  * network: "Using network X"; when hosts disagree the distinct values are joined with
//    ',' in order of appearance ("IB,Socket").
//  * lines_nccl: lines that mention NCCL (debug lines, version lines, framework lines).
// Never fails; malformed lines are skipped. Text fields go through printable(). No shared
// state: safe to call from several threads.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

struct NcclLogOptions {
  // Host for lines that carry none (per-rank files of frameworks that print no NCCL prefix,
  // e.g. a PyTorch log). Also listed in `hosts` when such a line produced data.
  std::string default_host;
  // Events kept; later ones only set events_truncated.
  std::size_t max_events = 512;
};

v1::NcclLogSummary parseNcclLog(std::string_view text, const NcclLogOptions& options = {});

// Merges summaries of per-rank/per-host files (NCCL_DEBUG_FILE=/x/nccl.%h.%p), parsed
// separately, into one: lists are unioned in order, transports add up, events are
// concatenated in part order and bounded by max_events, nranks is the largest, line counts
// add up, ranks are merged by (host, rank) keeping the larger sequence number. An event's
// line_number still refers to the text of the part it came from.
v1::NcclLogSummary mergeNcclLogs(std::span<const v1::NcclLogSummary> parts,
                                 std::size_t max_events = 512);

// A rank's progress as its source prints it: "opCount 2a" (NCCL's COLL lines print the
// opCount in hex, without 0x; also for SEQUENCE_UNSPECIFIED) or "SeqNum 7753" (PyTorch,
// decimal), so it can be found in the log as is.
std::string formatRankProgress(v1::NcclRankProgress::Sequence sequence, uint64_t value);

// "IB_COMPLETION_ERROR" etc. (the proto enum name).
std::string_view ncclEventKindName(v1::NcclEvent::Kind kind);

}  // namespace ibc::core
