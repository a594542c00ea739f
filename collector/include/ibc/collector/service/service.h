#pragma once

// The collector's logic between the network and the store (CONTRIBUTING.md, "The collector"): plain
// types in, plain types out, no sockets. It decodes a request frame, authorizes it by the
// TLS peer's certificate, verifies uploads (signature, chain, tenant), stores them through
// one group-commit writer and answers queries.
//
// Authorization (docs/security.md): only agent certificates upload, and only snapshots signed by
// an agent of their own tenant; only support certificates read (any tenant). Every
// rejection is logged with its reason and counted (stats()); accepted uploads are logged
// one by one while rare and counted per second under load (accepted_upload_log.h).

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "ibc/collector/event_log.h"
#include "ibc/collector/service/accepted_upload_log.h"
#include "ibc/collector/service/metrics.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/protocol.h"
#include "ibc/core/signing.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::collector {

// The other end of a connection, as its TLS client certificate names it.
struct Peer {
  core::CertificateIdentity identity;
  std::string address;  // "ip:port"
};

// "tenant/role/name@address" (the role alone when there is no tenant), for messages.
std::string describePeer(const Peer& peer);
// The peer as log fields: peer=ADDRESS, and tenant, role, cn once it has authenticated.
LogFields peerFields(const Peer& peer);

// Overload, shutdown and storage failures: the same request may succeed later.
using core::isRetryable;  // ibc/core/protocol.h
// The rejection reason for a failed signature check.
::ibcollect::v1::RejectReason rejectReasonFor(core::SignatureProblem problem);
// The rejection reason for a request that failed with `error`: the request's fault
// (invalid, too large) is MALFORMED_REQUEST, what does not exist NOT_FOUND, anything else
// (the store) STORAGE_FAILURE.
::ibcollect::v1::RejectReason rejectReasonFor(const core::Error& error);

struct ServiceOptions {
  std::size_t default_list_limit = 1000;
  std::size_t max_list_limit = 10000;
  // Uploads verified and waiting for the writer. Beyond this an upload is answered
  // OVERLOADED (retryable) instead of queueing: the network layer's byte budget normally
  // applies backpressure long before.
  std::size_t max_queued_uploads = 8192;
  // One write (one WAL sync) takes at most this much of the queue.
  std::size_t max_batch_records = 1024;
  std::size_t max_batch_bytes = 64u << 20;
  // Cases: bounds on what one case may hold (a request beyond them is refused).
  std::size_t max_case_snapshots = 20000;
  std::size_t max_case_bytes = 8u << 20;  // the serialized case, notes and host results
};

class GroupCommitWriter;
class RequestContext;
struct RequestCall;

class Service {
 public:
  using Reply = std::function<void(::ibcollect::v1::CollectorResponse)>;
  using Now = std::function<std::chrono::system_clock::time_point()>;

  // `store`, `verifier` and `log` must outlive the Service. `now` gives the time at which
  // certificates are judged and snapshots stamped as received.
  Service(Store& store, const core::SignatureVerifier& verifier, EventLog& log, Now now,
          ServiceOptions options = {});
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Handles one request frame (a serialized CollectorRequest) from `peer`. `reply` is
  // called exactly once: before handle() returns, or — for an upload that was accepted —
  // from the writer thread once the snapshot is durable (or the write failed).
  // Thread-safe; CPU-bound (signature verification, store reads): call it off the
  // network thread.
  void handle(const Peer& peer, std::string frame, Reply reply);

  // Counts and logs (event=connection_rejected) a rejection the network layer made (TLS
  // failure, timeout, limit). `peer` may hold only an address (before authentication).
  void recordRejection(::ibcollect::v1::RejectReason reason, const Peer& peer,
                       std::string_view detail);
  void connectionOpened();
  void connectionClosed();

  // Bytes of request frames read off the network (the network layer counts them here).
  void bytesReceived(std::size_t bytes) { received_bytes_ += bytes; }
  // What `--metrics` exports (metrics.h), without the store's size.
  MetricsSnapshot metrics() const;

  ::ibcollect::v1::CollectorStats stats() const;
  // The counters on one line ("stored=12 duplicate=1 rejected: bad_signature=2 ...").
  std::string statsLine() const;

  // Writes the accepted-upload count of a second that has ended (the network layer calls
  // it a few times a second). Thread-safe.
  void tick() { accepted_log_.tick(); }

  // Writes everything already queued, then stops the writer: later uploads are answered
  // SHUTTING_DOWN; the accepted uploads not logged yet are. Idempotent; the destructor
  // calls it.
  void drain();

 private:
  // Handlers reach the service through RequestContext (requests.h): its methods are the
  // only way in, so a new request kind needs no declaration here.
  friend class RequestContext;
  using Response = ::ibcollect::v1::CollectorResponse;

  // Verification, then the group-commit writer, whose callback replies.
  void upload(RequestCall& call);
  Response reject(uint64_t request_id, ::ibcollect::v1::RejectReason reason, const Peer& peer,
                  std::string_view what, std::string message);

  Store& store_;
  const core::SignatureVerifier& verifier_;
  EventLog& log_;
  Now now_;
  ServiceOptions options_;
  AcceptedUploadLog accepted_log_;
  std::unique_ptr<GroupCommitWriter> writer_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> stored_{0};
  std::atomic<uint64_t> duplicates_{0};
  std::atomic<uint64_t> bytes_stored_{0};
  std::atomic<uint64_t> connections_accepted_{0};
  std::atomic<int64_t> connections_open_{0};
  std::array<std::atomic<uint64_t>, 64> rejections_{};
  std::atomic<uint64_t> received_bytes_{0};
  LatencyHistogram ack_latency_;
};

}  // namespace ibc::collector
