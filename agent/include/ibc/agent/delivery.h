#pragma once

// Delivering signed snapshots to the collector (docs/security.md): upload over mutual TLS,
// retry with bounded exponential backoff (slept through the Clock seam), keep what could
// not be delivered in the spool, and say so. The guarantees:
//   - nothing acknowledged is lost (the collector acknowledges only durable writes);
//   - nothing is delivered twice (a snapshot is re-sent only when its acknowledgement did
//     not arrive, and the collector recognises it by id: AlreadyStored);
//   - nothing is dropped silently: a snapshot that can be neither delivered nor kept is
//     an error the caller must report (exit 4), a snapshot refused for good is kept under
//     the spool's rejected/ with the reason.
//
// `ibcollect snapshot`, `upload`, `flush` and `--job` all deliver through this API.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/seams.h"
#include "ibc/agent/spool.h"
#include "ibc/agent/upload.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/signed.pb.h"

namespace ibc::agent {

inline constexpr std::string_view kDefaultAgentConfig = "/etc/ibcollect/agent.conf";

struct RetryPolicy {
  int attempts = 4;  // tries per snapshot, the first included (>= 1)
  std::chrono::milliseconds first_backoff{500};
  std::chrono::milliseconds max_backoff{8000};
};

// The wait before try `attempt` + 1 (attempt >= 1): first_backoff doubled per failed
// try, capped at max_backoff, then scaled by a jitter in [0.5, 1] so many agents failing
// together do not retry in step. `jitter_seed` makes it deterministic (the snapshot id).
std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int attempt,
                                       uint64_t jitter_seed);

// Settings as the agent config file and the command line give them; empty = not given.
struct TransportSettings {
  std::string collector;  // HOST:PORT
  std::string ca;         // paths to PEM files
  std::string cert;
  std::string key;
  std::string spool;  // directory
  std::optional<uint64_t> spool_limit_mb;
  std::optional<int> retries;  // tries after the first
};

// Parses agent.conf (core::parseConfigFile's syntax); keys collector, ca, cert, key, spool,
// spool-limit-mb, retries, as the long flags. Errors: InvalidArgument, "FILE:LINE: ..." naming
// the unknown key (with the valid ones) or the bad value and what it wants.
core::Result<TransportSettings> parseAgentConfig(std::string_view text, std::string_view file);

// `over` wins where it sets a value.
TransportSettings mergeSettings(TransportSettings base, const TransportSettings& over);

struct DeliveryConfig {
  CollectorEndpoint collector;
  TlsCredentials credentials;
  ConnectTimeouts timeouts;
  std::string spool_dir = std::string(kDefaultSpoolDir);
  SpoolLimits spool_limits;
  RetryPolicy retry;
};

// Reads the PEM files the settings name. Errors: InvalidArgument (no collector, or ca,
// cert or key missing), NotFound / PermissionDenied (a file that cannot be read).
core::Result<DeliveryConfig> loadDeliveryConfig(const TransportSettings& settings,
                                                const Filesystem& files);

// What the TLS credentials are for: uploading snapshots (an agent certificate) or reading
// as support (a support certificate).
enum class CredentialUse { Upload, Support };

// Local checks before any connection, so that a mistake the user can fix fails at once with
// the reason instead of being retried and spooled (issue 10): the key belongs to the
// certificate, and the certificate's role fits `use` (a support certificate cannot upload;
// an agent certificate cannot read as support). `cert_path`/`key_path` name the files in
// messages. Errors: InvalidArgument (mismatch, wrong role), Malformed (no certificate or
// key in the PEM). A key type other than Ed25519 is left to the TLS library.
core::Status checkLocalCredentials(const TlsCredentials& credentials, CredentialUse use,
                                   const std::string& cert_path, const std::string& key_path);

// The spool directory when none is configured: /var/spool/ibcollect for root; for other
// users $XDG_STATE_HOME/ibcollect/spool, else $HOME/.local/state/ibcollect/spool (a user
// cannot write the system spool, and must not read other users' snapshots).
std::string defaultSpoolDir(bool is_root, const std::string& xdg_state_home,
                            const std::string& home);

// Where ibcollect keeps a user's files by default (`--job --out`, the per-user spool):
// $XDG_STATE_HOME/ibcollect (when absolute), else $HOME/.local/state/ibcollect, else
// /var/tmp/ibcollect. Never the working directory.
std::string userStateDir(const std::string& xdg_state_home, const std::string& home);

enum class DeliveryStatus {
  Delivered,      // stored by the collector now
  AlreadyStored,  // the collector had it (an earlier try's acknowledgement was lost)
  Spooled,        // not delivered; kept in the spool for `ibcollect flush`
  Rejected,       // refused for good; kept under the spool's rejected/
};

struct DeliveryOutcome {
  DeliveryStatus status = DeliveryStatus::Spooled;
  std::string snapshot_id;
  std::string kept_at;  // the spool file (Spooled, Rejected)
  std::string detail;   // why it was not delivered
  int attempts = 0;
  bool delivered() const {
    return status == DeliveryStatus::Delivered || status == DeliveryStatus::AlreadyStored;
  }
};

struct FlushReport {
  int delivered = 0;
  int already_stored = 0;
  int rejected = 0;                   // moved to rejected/
  int remaining = 0;                  // still pending in the spool
  std::vector<std::string> problems;  // one line per snapshot not delivered, and why
};

// Progress and retry notices for people ("attempt 1 failed: ...; retrying in 0.4 s").
using Notice = std::function<void(const std::string&)>;

// Sends snapshots over one connection (opened on first use, reopened after a failure;
// the connector resumes the TLS session of the previous one). Not thread-safe.
class SnapshotDelivery {
 public:
  SnapshotDelivery(CollectorConnector& connector, Spool& spool, Clock& clock, RetryPolicy retry,
                   Notice notice = {});

  // Delivers one snapshot, retrying; spools it when the collector cannot be reached or is
  // saturated. Errors: only when the snapshot could not be delivered AND could not be
  // kept (the message says both why): the caller must report it loudly.
  core::Result<DeliveryOutcome> deliver(const ::ibcollect::v1::SignedSnapshot& envelope);

  // Delivers many snapshots over one connection with several uploads in flight
  // (CollectorSession::callPipelined), each with deliver()'s guarantees: its own
  // acknowledgement or rejection, retries (a round re-sends only the snapshots not answered
  // for good, after one backoff), and spooled (or kept as rejected) one by one when not
  // delivered. One result per envelope, in order; `envelopes` must stay valid meanwhile.
  std::vector<core::Result<DeliveryOutcome>> deliverAll(
      const std::vector<const ::ibcollect::v1::SignedSnapshot*>& envelopes);

  // Sends every pending spooled snapshot, oldest first and pipelined, removing each once
  // acknowledged. Stops after the batch in which a snapshot could not be delivered after
  // its retries (the collector is down): it and the rest stay spooled.
  FlushReport flush();

 private:
  struct Attempt;
  using Envelopes = std::vector<const ::ibcollect::v1::SignedSnapshot*>;
  Attempt send(const ::ibcollect::v1::SignedSnapshot& envelope, const std::string& id);
  std::vector<Attempt> sendAll(const Envelopes& envelopes, const std::vector<std::string>& ids);
  void sendRound(const Envelopes& envelopes, const std::vector<std::string>& ids,
                 const std::vector<std::size_t>& which, std::vector<Attempt>& attempts);
  core::Result<DeliveryOutcome> settle(const ::ibcollect::v1::SignedSnapshot& envelope,
                                       DeliveryOutcome out, const Attempt& a);
  void flushBatch(const std::vector<SpoolEntry>& entries, FlushReport& report);

  CollectorConnector& connector_;
  Spool& spool_;
  Clock& clock_;
  RetryPolicy retry_;
  Notice notice_;
  std::unique_ptr<CollectorSession> session_;
};

}  // namespace ibc::agent
