#pragma once

// `ibcollect-collector` (docs/security.md): command line and wiring of store → service → server.
//
//   ibcollect-collector --listen ADDR:PORT --data DIR --ca CA.pem --cert CERT.pem --key KEY.pem
//   ibcollect-collector --config FILE          (the same keys, `listen = "127.0.0.1:7443"`)
//   ibcollect-collector backup --data DIR DEST (a RocksDB checkpoint; see --help)
//
// Prints `listening on ADDR:PORT` (the bound port when PORT is 0) as the first line of
// `out` (then `metrics on ADDR:PORT` with --metrics), then logs events to `err`, one
// `key=value` line each (event_log.h): every rejection with its reason, support reads,
// retention runs, backups, and on SIGTERM the drain and the final counters.

#include <ostream>
#include <string>
#include <vector>

namespace ibc::collector {

// Exit codes: 0 stopped cleanly (SIGTERM/SIGINT), 3 usage error, 4 could not start
// (unreadable certificates, store cannot open, address in use).
int runCollector(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ibc::collector
