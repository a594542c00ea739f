#pragma once

// The agent's side of the collector protocol lives in ibc_client (client/), shared with the
// console; the agent's code names it through these aliases.

#include "ibc/client/collector_client.h"

namespace ibc::agent {

using client::CollectorConnection;
using client::CollectorConnector;
using client::CollectorEndpoint;
using client::CollectorSession;
using client::ConnectTimeouts;
using client::describeRejection;
using client::parseCollectorEndpoint;
using client::TlsCollectorConnector;
using client::TlsCredentials;

}  // namespace ibc::agent
