#pragma once

// The pure parts of the collector protocol (docs/security.md, proto/ibcollect/v1/collector.proto)
// that every side needs to agree on: where a collector is (`HOST:PORT`), what a rejection
// reason is called and whether it is worth retrying, and how a rejection reads for people.
// The agent, the collector and the console all use these; the TLS client is `ibc_client`'s,
// the server the collector's. No I/O here.

#include <cstdint>
#include <string>
#include <string_view>

#include "ibc/core/result.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::core {

// A collector's address as given on the command line or in a config file.
struct CollectorEndpoint {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  uint16_t port = 0;
  std::string text() const;  // "host:port" ("[v6]:port")
};

// Parses "host:port" or "[v6addr]:port"; the port is 1..65535 in decimal.
// Errors: InvalidArgument, quoting the text.
Result<CollectorEndpoint> parseCollectorEndpoint(std::string_view text);

// Stable short name of a rejection reason: "bad_signature" for
// REJECT_REASON_BAD_SIGNATURE, "reason_N" for a value this build does not know. Used in the
// collector's log and counters and in the agent's messages.
std::string rejectReasonName(::ibcollect::v1::RejectReason reason);

// Overload, shutdown and storage failures: the same request may succeed later. Every other
// reason (a bad signature, a wrong tenant, a malformed request) fails the same way again.
bool isRetryable(::ibcollect::v1::RejectReason reason);

// The rejection's reason and message ("bad_signature: the signature does not match ..."),
// for people.
std::string describeRejection(const ::ibcollect::v1::Rejection& rejection);

}  // namespace ibc::core
