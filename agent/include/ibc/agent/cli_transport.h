#pragma once

// Transport options and helpers shared by the CLI command modules: `snapshot` (sign and
// deliver), `upload`, `flush`, `verify` (agent/src/cli/) and the support program's `fetch`,
// `bundle`, `case` and `host-inspect` (support/src/cli/).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ibc/agent/cli_common.h"
#include "ibc/agent/delivery.h"
#include "ibc/core/signing.h"

namespace ibc::agent::cli {

struct TransportArgs {
  std::string config;  // --config FILE
  TransportSettings flags;
  int retries = -1;             // --retries (unset: -1)
  uint64_t spool_limit_mb = 0;  // --spool-limit-mb (unset: 0)
};

// --collector, --ca, --cert, --key, --spool, --spool-limit-mb, --retries, --config.
// The collector, TLS and spool flags of a command that sends snapshots. For `fetch`
// (download = true) the certificate is the support engineer's and nothing is spooled, so
// the spool and retry flags are left out and the wording says so.
void addTransportOptions(CLI::App* cmd, TransportArgs& args, bool download = false);

// The agent config (--config FILE, else /etc/ibcollect/agent.conf when it exists)
// overridden by the flags. Errors: the config file cannot be read or parsed.
core::Result<TransportSettings> transportSettings(CliEnvironment& env, const TransportArgs& args);

// What `snapshot` does with what it collected: sign it when a certificate and key are
// configured, deliver it when a collector is.
struct SnapshotTransport {
  std::optional<core::SnapshotSigner> signer;
  std::optional<DeliveryConfig> delivery;
};

// Errors (usage): unreadable certificate or key, a key that is not the certificate's, a
// collector configured without a certificate and key.
core::Result<SnapshotTransport> snapshotTransport(CliEnvironment& env, const TransportArgs& args);

// The signed envelope (unsigned when no identity is configured).
core::Result<::ibcollect::v1::SignedSnapshot> envelopeFor(
    const SnapshotTransport& transport, const ::ibcollect::v1::Snapshot& snapshot);

// Delivers when a collector is configured and says on env.err what happened and what was
// kept where (`kept_in`: the .ibsnap file the caller already wrote, or empty). False when
// the snapshot was not delivered (exit 4 unless the verdict is worse).
bool deliverCollected(CliEnvironment& env, const SnapshotTransport& transport,
                      const ::ibcollect::v1::SignedSnapshot& envelope,
                      const std::string& kept_in = {});

// One snapshot of a batch: `what` names it in messages ("node01's snapshot", a file),
// `kept_in` as for deliverCollected. `envelope` must outlive the call.
struct CollectedUpload {
  const ::ibcollect::v1::SignedSnapshot* envelope = nullptr;
  std::string what;
  std::string kept_in;
};

// How a batch delivery reports: a line per snapshot, or one line for those delivered and a
// line per snapshot that was not (a job of thousands of nodes).
enum class BatchReport { EachSnapshot, Summary };

// As deliverCollected for many snapshots, over one connection with several uploads in
// flight (SnapshotDelivery::deliverAll: the same per-snapshot guarantees). Returns how many
// were not delivered; 0 when no collector is configured.
std::size_t deliverCollectedAll(CliEnvironment& env, const SnapshotTransport& transport,
                                const std::vector<CollectedUpload>& uploads, BatchReport how);

// A snapshot fetched from the collector: the `.ibsnap` file bytes (magic + envelope), checked
// to hash to its id.
struct FetchedSnapshot {
  std::string tenant;
  std::string node;
  std::string snapshot_id;
  std::string file_bytes;
};

// Every snapshot of `job` (of `tenant`, or every tenant when empty) the collector holds,
// fetched with a support certificate. A snapshot that arrives damaged is skipped and named in
// `problems`. Errors: the connection failed or the collector refused (the message says).
core::Result<std::vector<FetchedSnapshot>> fetchJobSnapshots(const DeliveryConfig& config,
                                                             const std::string& job,
                                                             const std::string& tenant,
                                                             std::vector<std::string>& problems);

// A case fetched from the collector with every snapshot it covers (support certificate).
struct FetchedCase {
  ::ibcollect::v1::Case info;
  std::vector<FetchedSnapshot> snapshots;
};

// The case `case_id` (of `tenant` when not empty) and its snapshots. A snapshot that arrives
// damaged is skipped and named in `problems`. Errors: as fetchJobSnapshots.
core::Result<FetchedCase> fetchCase(const DeliveryConfig& config, const std::string& case_id,
                                    const std::string& tenant, std::vector<std::string>& problems);

// A new connection to the collector, for client::CollectorApi's calls. Errors: as
// CollectorConnector::connect().
core::Result<std::unique_ptr<client::CollectorSession>> connectCollector(
    const DeliveryConfig& config);

// The delivery configuration for `use` (Support for downloads): settings, certificates
// present. Errors: what is missing or unreadable (usage).
core::Result<DeliveryConfig> deliveryConfig(CliEnvironment& env, const TransportArgs& args,
                                            CredentialUse use);

// Reads a PEM file the user named (bounded).
core::Result<std::string> readPem(CliEnvironment& env, const std::string& path);

// The signer of --cert/--key (or the config's), for commands that sign (`bundle export`,
// `host-inspect --attach-to`). `missing` is the sentence printed when no certificate and
// key are configured. Prints the reason on env.err and returns nullopt on failure (exit 3).
std::optional<core::SnapshotSigner> signerFromArgs(CliEnvironment& env, const TransportArgs& args,
                                                   const char* missing);

// The verifier of --ca (or the config's), for `verify` and `bundle verify`. Prints the
// reason and returns nullptr on failure (exit 3).
std::unique_ptr<core::SignatureVerifier> verifierFromArgs(CliEnvironment& env,
                                                          const TransportArgs& args,
                                                          const char* missing);

}  // namespace ibc::agent::cli
