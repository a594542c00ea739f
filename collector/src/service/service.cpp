#include "ibc/collector/service/service.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "group_commit.h"
#include "ibc/collector/service/requests.h"
#include "ibc/collector/service/snapshot_keys.h"
#include "ibc/core/frame.h"
#include "ibc/core/protocol.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;
using core::CertificateRole;

std::string describePeer(const Peer& peer) {
  const auto& id = peer.identity;
  std::string out;
  if (!id.tenant.empty() && id.role == CertificateRole::Agent) out = id.tenant + "/";
  out += std::string(core::certificateRoleName(id.role)) + "/" + id.name;
  if (!peer.address.empty()) out += "@" + peer.address;
  return out;
}

LogFields peerFields(const Peer& peer) {
  LogFields out{{"peer", peer.address.empty() ? std::string("unknown") : peer.address}};
  const auto& id = peer.identity;
  if (!id.tenant.empty()) out.push_back({"tenant", id.tenant});
  if (!id.name.empty()) {
    out.push_back({"role", std::string(core::certificateRoleName(id.role))});
    out.push_back({"cn", id.name});
  }
  return out;
}

v1::RejectReason rejectReasonFor(core::SignatureProblem problem) {
  using core::SignatureProblem;
  switch (problem) {
    case SignatureProblem::None: return v1::REJECT_REASON_UNSPECIFIED;
    case SignatureProblem::Unsigned: return v1::REJECT_REASON_UNSIGNED;
    case SignatureProblem::UnsupportedAlgorithm: return v1::REJECT_REASON_UNSUPPORTED_ALGORITHM;
    case SignatureProblem::MalformedChain: return v1::REJECT_REASON_MALFORMED_CHAIN;
    case SignatureProblem::WrongKeyType: return v1::REJECT_REASON_WRONG_KEY_TYPE;
    case SignatureProblem::UnknownCa: return v1::REJECT_REASON_UNKNOWN_CA;
    case SignatureProblem::CertificateExpired: return v1::REJECT_REASON_CERTIFICATE_EXPIRED;
    case SignatureProblem::CertificateNotYetValid:
      return v1::REJECT_REASON_CERTIFICATE_NOT_YET_VALID;
    case SignatureProblem::CertificateRejected: return v1::REJECT_REASON_CERTIFICATE_REJECTED;
    case SignatureProblem::BadSignature: return v1::REJECT_REASON_BAD_SIGNATURE;
  }
  return v1::REJECT_REASON_UNSPECIFIED;
}

v1::RejectReason rejectReasonFor(const core::Error& error) {
  switch (error.code) {
    case core::ErrorCode::InvalidArgument:
    case core::ErrorCode::TooLarge: return v1::REJECT_REASON_MALFORMED_REQUEST;
    case core::ErrorCode::NotFound: return v1::REJECT_REASON_NOT_FOUND;
    default: return v1::REJECT_REASON_STORAGE_FAILURE;
  }
}

namespace {

int64_t unixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

Service::Service(Store& store, const core::SignatureVerifier& verifier, EventLog& log, Now now,
                 ServiceOptions options)
    : store_(store),
      verifier_(verifier),
      log_(log),
      now_(std::move(now)),
      options_(options),
      accepted_log_(log),
      writer_(std::make_unique<GroupCommitWriter>(
          store, options.max_queued_uploads, options.max_batch_records, options.max_batch_bytes)) {}

Service::~Service() { drain(); }

void Service::drain() {
  writer_->stop();
  accepted_log_.flush();
}

void Service::connectionOpened() {
  ++connections_accepted_;
  ++connections_open_;
}

void Service::connectionClosed() { --connections_open_; }

namespace {

void logRejection(EventLog& log, std::string_view event, v1::RejectReason reason, const Peer& peer,
                  LogFields extra, std::string_view detail) {
  LogFields fields{{"reason", core::rejectReasonName(reason)}};
  for (auto& f : peerFields(peer)) fields.push_back(std::move(f));
  for (auto& f : extra) fields.push_back(std::move(f));
  if (!detail.empty()) fields.push_back({"detail", std::string(detail)});
  log.event(isRetryable(reason) ? LogLevel::Info : LogLevel::Warn, event, fields);
}

}  // namespace

void Service::recordRejection(v1::RejectReason reason, const Peer& peer, std::string_view detail) {
  const auto index = static_cast<std::size_t>(reason);
  if (index < rejections_.size()) ++rejections_[index];
  logRejection(log_, "connection_rejected", reason, peer, {}, detail);
}

v1::CollectorResponse Service::reject(uint64_t request_id, v1::RejectReason reason,
                                      const Peer& peer, std::string_view what,
                                      std::string message) {
  const auto index = static_cast<std::size_t>(reason);
  if (index < rejections_.size()) ++rejections_[index];
  // `what` is "upload", "upload ID" or the request's name.
  if (what.rfind("upload", 0) == 0) {
    LogFields extra;
    if (what.size() > 7) extra.push_back({"snapshot", std::string(what.substr(7))});
    logRejection(log_, "upload_rejected", reason, peer, std::move(extra), message);
  } else {
    logRejection(log_, "request_rejected", reason, peer, {{"request", std::string(what)}}, message);
  }
  v1::CollectorResponse r;
  r.set_request_id(request_id);
  auto* rej = r.mutable_rejection();
  rej->set_reason(reason);
  rej->set_message(std::move(message));
  rej->set_retryable(isRetryable(reason));
  return r;
}

void Service::handle(const Peer& peer, std::string frame, Reply reply) {
  const auto received = std::chrono::steady_clock::now();
  ++requests_;
  v1::CollectorRequest request;
  if (!request.ParseFromString(frame)) {
    reply(reject(0, v1::REJECT_REASON_MALFORMED_REQUEST, peer, "frame",
                 "not a CollectorRequest (" + std::to_string(frame.size()) + " bytes)"));
    return;
  }
  frame = std::string();
  const RequestKind* kind = findRequestKind(request.kind_case());
  if (kind == nullptr) {
    reply(reject(request.request_id(), v1::REJECT_REASON_UNSUPPORTED_REQUEST, peer, "request",
                 "empty or unknown request kind (a newer client?)"));
    return;
  }
  if (!kind->allowed.contains(peer.identity.role)) {
    reply(reject(request.request_id(), v1::REJECT_REASON_FORBIDDEN, peer, kind->name,
                 kind->refusal(peer.identity.role)));
    return;
  }
  RequestCall call{RequestContext(*this), peer, request, reply, kind->name, received};
  kind->handle(call);
}

Store& RequestContext::store() const { return service_.store_; }
const ServiceOptions& RequestContext::options() const { return service_.options_; }
std::chrono::system_clock::time_point RequestContext::now() const { return service_.now_(); }
EventLog& RequestContext::log() const { return service_.log_; }
v1::CollectorStats RequestContext::stats() const { return service_.stats(); }
void RequestContext::upload(RequestCall& call) const { service_.upload(call); }

std::size_t RequestContext::listLimit(uint32_t asked) const {
  const ServiceOptions& o = service_.options_;
  return asked == 0 ? o.default_list_limit : std::min<std::size_t>(asked, o.max_list_limit);
}

v1::CollectorResponse RequestContext::reject(const RequestCall& call, v1::RejectReason reason,
                                             std::string message) const {
  return service_.reject(call.request.request_id(), reason, call.peer, call.name,
                         std::move(message));
}

v1::CollectorResponse RequestContext::failed(const RequestCall& call,
                                             const core::Error& error) const {
  return reject(call, rejectReasonFor(error), error.message);
}

// The role is an agent's (the table); the tenant, signature, signer and node are checked
// here, then the record goes to the group-commit writer, whose callback replies.
void Service::upload(RequestCall& call) {
  const Peer& peer = call.peer;
  const uint64_t request_id = call.request.request_id();
  const Reply& reply = call.reply;
  const auto frame_received = call.received;
  std::string signed_bytes = std::move(*call.request.mutable_upload()->mutable_signed_snapshot());
  const auto rejectUpload = [&](v1::RejectReason reason, std::string message) {
    reply(reject(request_id, reason, peer, "upload", std::move(message)));
  };
  if (peer.identity.tenant.empty()) {
    return rejectUpload(v1::REJECT_REASON_PEER_IDENTITY,
                        "the agent certificate names no tenant (subject O)");
  }
  // Exactly what was signed plus the signature and chain: unknown fields and other
  // encodings of the same envelope are refused, so what is stored and served is what the
  // signature covers and the id names one byte string.
  auto parsed = core::parseSignedEnvelope(signed_bytes);
  if (!parsed.ok()) {
    return rejectUpload(v1::REJECT_REASON_MALFORMED_REQUEST,
                        signed_bytes.empty()
                            ? std::string("the upload does not carry a signed snapshot envelope")
                            : parsed.error().message);
  }
  v1::SignedSnapshot envelope = std::move(*parsed);
  const auto received = now_();
  const auto check = verifier_.verify(envelope, received);
  if (!check.ok()) return rejectUpload(rejectReasonFor(check.problem), check.message);
  if (check.signer.role != CertificateRole::Agent) {
    return rejectUpload(
        v1::REJECT_REASON_SIGNER_NOT_AN_AGENT,
        "signed by " + check.signer.subject + ", which is not an agent certificate");
  }
  if (check.signer.tenant != peer.identity.tenant) {
    return rejectUpload(v1::REJECT_REASON_TENANT_MISMATCH,
                        "snapshot signed by tenant '" + check.signer.tenant +
                            "' uploaded by tenant '" + peer.identity.tenant + "'");
  }
  auto keys = readSnapshotIndexKeys(envelope.snapshot());
  if (!keys.ok()) return rejectUpload(v1::REJECT_REASON_MALFORMED_REQUEST, keys.error().message);
  if (auto st = core::checkSignerNode(keys->node, check.signer); !st.ok()) {
    return rejectUpload(v1::REJECT_REASON_NODE_MISMATCH, st.error().message);
  }

  SnapshotRecord record;
  auto& info = record.info;
  info.set_snapshot_id(core::snapshotId(envelope));
  info.set_tenant(check.signer.tenant);
  info.set_job_id(keys->job_id);
  info.set_node(keys->node);
  info.set_received_at_unix_ms(unixMs(received));
  info.set_collected_at_unix_ms(keys->collected_at_unix_ms != 0 ? keys->collected_at_unix_ms
                                                                : info.received_at_unix_ms());
  info.set_signer(check.signer.subject);
  info.set_size_bytes(signed_bytes.size());
  record.envelope = std::move(signed_bytes);
  const std::size_t size = record.envelope.size();
  AcceptedUpload accepted{info.snapshot_id(), info.tenant(), info.job_id(),
                          info.node(),        size,          false};

  auto done = [this, peer, request_id, accepted, reply,
               frame_received](Result<PutOutcome> outcome) mutable {
    const std::string& id = accepted.snapshot_id;
    if (!outcome.ok()) {
      reply(reject(request_id, v1::REJECT_REASON_STORAGE_FAILURE, peer, "upload " + id,
                   outcome.error().message));
      return;
    }
    if (*outcome == PutOutcome::Stored) {
      ++stored_;
      bytes_stored_ += accepted.bytes;
    } else {
      ++duplicates_;
    }
    accepted.already_stored = *outcome == PutOutcome::AlreadyStored;
    accepted_log_.accepted(peer, accepted);
    v1::CollectorResponse r;
    r.set_request_id(request_id);
    r.mutable_ack()->set_snapshot_id(id);
    r.mutable_ack()->set_already_stored(*outcome == PutOutcome::AlreadyStored);
    ack_latency_.observe(std::chrono::steady_clock::now() - frame_received);
    reply(std::move(r));
  };
  switch (writer_->submit(std::move(record), std::move(done))) {
    case GroupCommitWriter::Submitted::Queued: return;
    case GroupCommitWriter::Submitted::Full:
      return rejectUpload(v1::REJECT_REASON_OVERLOADED,
                          "ingest queue full (" + std::to_string(options_.max_queued_uploads) +
                              " uploads waiting); retry later");
    case GroupCommitWriter::Submitted::Stopped:
      return rejectUpload(v1::REJECT_REASON_SHUTTING_DOWN, "the collector is shutting down");
  }
}

v1::CollectorStats Service::stats() const {
  v1::CollectorStats s;
  s.set_uptime_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started_)
                      .count());
  s.set_connections_accepted(connections_accepted_);
  s.set_connections_open(static_cast<uint64_t>(std::max<int64_t>(0, connections_open_)));
  s.set_uploads_stored(stored_);
  s.set_uploads_duplicate(duplicates_);
  s.set_bytes_stored(bytes_stored_);
  s.set_write_batches(writer_->batches());
  s.set_requests(requests_);
  for (std::size_t i = 0; i < rejections_.size(); ++i) {
    const uint64_t n = rejections_[i];
    if (n == 0) continue;
    auto* rc = s.add_rejections();
    rc->set_reason(static_cast<v1::RejectReason>(i));
    rc->set_name(core::rejectReasonName(static_cast<v1::RejectReason>(i)));
    rc->set_count(n);
  }
  return s;
}

MetricsSnapshot Service::metrics() const {
  MetricsSnapshot m;
  m.stats = stats();
  m.received_bytes = received_bytes_;
  m.writer_queue_depth = writer_->queued();
  m.ack_latency = ack_latency_.counts();
  return m;
}

std::string Service::statsLine() const {
  const auto s = stats();
  std::ostringstream out;
  out << "connections=" << s.connections_accepted() << " requests=" << s.requests()
      << " stored=" << s.uploads_stored() << " duplicate=" << s.uploads_duplicate()
      << " bytes=" << s.bytes_stored() << " write_batches=" << s.write_batches() << " rejected:";
  if (s.rejections_size() == 0) out << " none";
  for (const auto& r : s.rejections()) out << ' ' << r.name() << '=' << r.count();
  return out.str();
}

}  // namespace ibc::collector
