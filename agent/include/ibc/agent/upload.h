#pragma once

// The agent's side of the collector protocol lives in ibc_client (client/), shared with the
// console; the agent's code names it through these aliases. Endpoints and rejection names
// are the protocol's pure parts, in ibc/core/protocol.h.

#include "ibc/client/collector_client.h"
#include "ibc/core/protocol.h"

namespace ibc::agent {

using client::CollectorConnection;
using client::CollectorConnector;
using client::CollectorSession;
using client::ConnectTimeouts;
using client::TlsCollectorConnector;
using client::TlsCredentials;
using core::CollectorEndpoint;
using core::describeRejection;
using core::parseCollectorEndpoint;

}  // namespace ibc::agent
