#include "ibc/agent/delivery.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "ibc/core/config_file.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::agent {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr std::size_t kMaxPemBytes = 1u << 20;

std::string seconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

uint64_t seedOf(const std::string& id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : id) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int attempt,
                                       uint64_t jitter_seed) {
  int64_t base = policy.first_backoff.count();
  for (int i = 1; i < attempt && base < policy.max_backoff.count(); ++i) base *= 2;
  base = std::min<int64_t>(base, policy.max_backoff.count());
  // A splitmix64 step of seed and attempt: a jitter fraction in [0.5, 1].
  uint64_t z = jitter_seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(attempt);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const double fraction =
      0.5 + 0.5 * static_cast<double>(z >> 11) / static_cast<double>(1ull << 53);
  return std::chrono::milliseconds(static_cast<int64_t>(static_cast<double>(base) * fraction));
}

Result<TransportSettings> parseAgentConfig(std::string_view text, std::string_view file) {
  static const std::vector<std::string> kKeys = {"collector",      "ca",     "cert", "key", "spool",
                                                 "spool-limit-mb", "retries"};
  auto entries = core::parseConfigFile(text, file, kKeys);
  if (!entries.ok()) return entries.error();
  TransportSettings s;
  for (const auto& e : *entries) {
    const auto bad = [&](const std::string& want) {
      return Error{ErrorCode::InvalidArgument, std::string(file) + ":" + std::to_string(e.line) +
                                                   ": " + e.key + " wants " + want + ", got '" +
                                                   e.value + "'"};
    };
    const auto number = [&](uint64_t& out) {
      if (e.value.empty() || e.value.size() > 19 ||
          !std::all_of(e.value.begin(), e.value.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
      out = std::stoull(e.value);
      return true;
    };
    if (e.key == "collector") {
      s.collector = e.value;
    } else if (e.key == "ca") {
      s.ca = e.value;
    } else if (e.key == "cert") {
      s.cert = e.value;
    } else if (e.key == "key") {
      s.key = e.value;
    } else if (e.key == "spool") {
      s.spool = e.value;
    } else if (e.key == "spool-limit-mb") {
      uint64_t n = 0;
      if (!number(n) || n == 0) return bad("a positive number of MiB");
      s.spool_limit_mb = n;
    } else if (e.key == "retries") {
      uint64_t n = 0;
      if (!number(n) || n > 100) return bad("a number from 0 to 100");
      s.retries = static_cast<int>(n);
    }
    if (e.value.empty()) return bad("a value");
  }
  return s;
}

TransportSettings mergeSettings(TransportSettings base, const TransportSettings& over) {
  const auto take = [](std::string& to, const std::string& from) {
    if (!from.empty()) to = from;
  };
  take(base.collector, over.collector);
  take(base.ca, over.ca);
  take(base.cert, over.cert);
  take(base.key, over.key);
  take(base.spool, over.spool);
  if (over.spool_limit_mb) base.spool_limit_mb = over.spool_limit_mb;
  if (over.retries) base.retries = over.retries;
  return base;
}

Result<DeliveryConfig> loadDeliveryConfig(const TransportSettings& settings,
                                          const Filesystem& files) {
  if (settings.collector.empty()) {
    return Error{ErrorCode::InvalidArgument,
                 "no collector configured (--collector HOST:PORT or collector = ... in " +
                     std::string(kDefaultAgentConfig) + ")"};
  }
  DeliveryConfig c;
  auto endpoint = parseCollectorEndpoint(settings.collector);
  if (!endpoint.ok()) return endpoint.error();
  c.collector = std::move(*endpoint);
  for (auto [name, path, pem] :
       {std::tuple{"--ca", &settings.ca, &c.credentials.ca_pem},
        std::tuple{"--cert", &settings.cert, &c.credentials.certificate_pem},
        std::tuple{"--key", &settings.key, &c.credentials.key_pem}}) {
    if (path->empty()) {
      return Error{ErrorCode::InvalidArgument, std::string("talking to the collector needs ") +
                                                   name + " (or " + (std::string(name).substr(2)) +
                                                   " = ... in the agent config)"};
    }
    auto content = files.readFile(*path, kMaxPemBytes);
    if (!content.ok()) return content.error();
    *pem = std::move(*content);
  }
  if (!settings.spool.empty()) c.spool_dir = settings.spool;
  if (settings.spool_limit_mb) c.spool_limits.max_bytes = *settings.spool_limit_mb << 20;
  if (settings.retries) c.retry.attempts = 1 + *settings.retries;
  return c;
}

core::Status checkLocalCredentials(const TlsCredentials& credentials, CredentialUse use,
                                   const std::string& cert_path, const std::string& key_path) {
  auto signer = core::SnapshotSigner::fromPem(credentials.certificate_pem, credentials.key_pem);
  if (!signer.ok()) {
    if (signer.error().code == ErrorCode::Unsupported) return core::Status();
    if (signer.error().code == ErrorCode::InvalidArgument) {
      return Error{ErrorCode::InvalidArgument,
                   "the private key " + key_path + " does not belong to the certificate " +
                       cert_path +
                       ": give the key issued with that certificate (--cert/--key, or cert = and "
                       "key = in the agent config)"};
    }
    return Error{signer.error().code, cert_path + " / " + key_path + ": " + signer.error().message};
  }
  const auto& id = signer->identity();
  if (use == CredentialUse::Upload && id.role == core::CertificateRole::Support) {
    return Error{ErrorCode::InvalidArgument,
                 cert_path + " is a support certificate (" + id.subject +
                     "): snapshots are uploaded with the node's agent certificate (OU=agent); "
                     "support certificates read (`ibcollect fetch`)"};
  }
  if (use == CredentialUse::Support && id.role == core::CertificateRole::Agent) {
    return Error{ErrorCode::InvalidArgument,
                 cert_path + " is an agent certificate (" + id.subject +
                     "): reading from the collector needs a support certificate (OU=support)"};
  }
  return core::Status();
}

std::string defaultSpoolDir(bool is_root, const std::string& xdg_state_home,
                            const std::string& home) {
  if (is_root) return std::string(kDefaultSpoolDir);
  return userStateDir(xdg_state_home, home) + "/spool";
}

std::string userStateDir(const std::string& xdg_state_home, const std::string& home) {
  if (!xdg_state_home.empty() && xdg_state_home.front() == '/')
    return xdg_state_home + "/ibcollect";
  if (!home.empty() && home.front() == '/') return home + "/.local/state/ibcollect";
  return "/var/tmp/ibcollect";
}

// ---- delivery --------------------------------------------------------------------------------

namespace {

// Uploads one pipelined call carries at most, so the serialized copies held at once stay
// bounded (a 2,000-node job is a few calls; the pipeline drains only between them).
constexpr std::size_t kBatchUploads = 256;
constexpr std::size_t kBatchBytes = 32u << 20;

enum class AnswerKind { Acknowledged, Refused, Retry };

struct JudgedAnswer {
  AnswerKind kind = AnswerKind::Retry;
  bool already_stored = false;
  std::string detail;
  bool keep_session = true;  // false: the connection is not used again
};

// What the collector's answer to the upload of snapshot `id` means for it.
JudgedAnswer judgeAnswer(const Result<v1::CollectorResponse>& response, const std::string& id) {
  JudgedAnswer j;
  if (!response.ok()) {
    j.keep_session = false;
    j.detail = response.error().message;
  } else if (response->has_ack()) {
    if (response->ack().snapshot_id() == id) {
      j.kind = AnswerKind::Acknowledged;
      j.already_stored = response->ack().already_stored();
      return j;
    }
    j.keep_session = false;
    j.detail = "the collector acknowledged " + response->ack().snapshot_id() + " for " + id;
  } else if (response->has_rejection()) {
    j.detail = "collector refused it: " + describeRejection(response->rejection());
    if (!response->rejection().retryable()) {
      j.kind = AnswerKind::Refused;
      return j;
    }
    j.keep_session = false;  // the collector may have closed it (overload, shutdown)
  } else {
    j.keep_session = false;
    j.detail = "the collector gave an answer this agent does not understand";
  }
  return j;
}

v1::CollectorRequest uploadRequest(const v1::SignedSnapshot& envelope) {
  v1::CollectorRequest request;
  request.mutable_upload()->set_signed_snapshot(core::serializeEnvelope(envelope));
  return request;
}

}  // namespace

struct SnapshotDelivery::Attempt {
  enum class Kind { Acknowledged, Refused, Failed } kind = Kind::Failed;
  bool already_stored = false;
  std::string detail;
  int tries = 0;

  void take(const JudgedAnswer& j) {
    kind = j.kind == AnswerKind::Acknowledged ? Kind::Acknowledged
           : j.kind == AnswerKind::Refused    ? Kind::Refused
                                              : Kind::Failed;
    already_stored = j.already_stored;
    detail = j.detail;
  }
};

SnapshotDelivery::SnapshotDelivery(CollectorConnector& connector, Spool& spool, Clock& clock,
                                   RetryPolicy retry, Notice notice)
    : connector_(connector),
      spool_(spool),
      clock_(clock),
      retry_(retry),
      notice_(std::move(notice)) {
  retry_.attempts = std::max(1, retry_.attempts);
}

SnapshotDelivery::Attempt SnapshotDelivery::send(const v1::SignedSnapshot& envelope,
                                                 const std::string& id) {
  return std::move(sendAll({&envelope}, {id}).front());
}

// Rounds of sends: each round sends, pipelined, every snapshot not answered for good that
// has tries left; a backoff separates rounds.
std::vector<SnapshotDelivery::Attempt> SnapshotDelivery::sendAll(
    const Envelopes& envelopes, const std::vector<std::string>& ids) {
  std::vector<Attempt> attempts(envelopes.size());
  for (int round = 1;; ++round) {
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < attempts.size(); ++i) {
      const Attempt& a = attempts[i];
      if (a.kind == Attempt::Kind::Failed && a.tries < retry_.attempts) pending.push_back(i);
    }
    if (pending.empty()) break;
    if (round > 1) {
      const std::size_t first = pending.front();
      const auto wait = backoffDelay(retry_, round - 1, seedOf(ids[first]));
      if (notice_) {
        const std::string what =
            pending.size() == 1
                ? "attempt " + std::to_string(attempts[first].tries) + " failed: "
                : std::to_string(pending.size()) + " snapshots not delivered yet (" +
                      ids[first].substr(0, 12) + ": ";
        notice_(what + attempts[first].detail + (pending.size() == 1 ? "" : ")") +
                "; retrying in " + seconds(wait));
      }
      clock_.sleepUntil(clock_.steadyNow() + wait);
    }
    sendRound(envelopes, ids, pending, attempts);
  }
  return attempts;
}

// One round over `which`, in batches on the current connection. A connection that fails
// ends the round: what it did not carry waits for the next round without losing a try.
void SnapshotDelivery::sendRound(const Envelopes& envelopes, const std::vector<std::string>& ids,
                                 const std::vector<std::size_t>& which,
                                 std::vector<Attempt>& attempts) {
  for (std::size_t from = 0; from < which.size();) {
    if (!session_) {
      auto s = connector_.connect();
      if (!s.ok()) {
        for (std::size_t k = from; k < which.size(); ++k) {
          Attempt& a = attempts[which[k]];
          ++a.tries;
          a.kind = Attempt::Kind::Failed;
          a.detail = s.error().message;
        }
        return;
      }
      session_ = std::move(*s);
    }
    std::vector<v1::CollectorRequest> requests;
    std::size_t bytes = 0;
    std::size_t to = from;
    while (to < which.size() && requests.size() < kBatchUploads &&
           (requests.empty() || bytes < kBatchBytes)) {
      requests.push_back(uploadRequest(*envelopes[which[to]]));
      bytes += requests.back().upload().signed_snapshot().size();
      ++to;
    }
    const auto results = session_->callPipelined(std::move(requests));
    bool keep_session = true;
    for (std::size_t k = from; k < to; ++k) {
      const JudgedAnswer j = judgeAnswer(results[k - from], ids[which[k]]);
      ++attempts[which[k]].tries;
      attempts[which[k]].take(j);
      keep_session = keep_session && j.keep_session;
    }
    from = to;
    if (!keep_session) {
      session_.reset();
      return;
    }
  }
}

// What became of one snapshot after its tries: delivered, or kept (spool, rejected/).
Result<DeliveryOutcome> SnapshotDelivery::settle(const v1::SignedSnapshot& envelope,
                                                 DeliveryOutcome out, const Attempt& a) {
  out.attempts = a.tries;
  out.detail = a.detail;
  switch (a.kind) {
    case Attempt::Kind::Acknowledged:
      out.status = a.already_stored ? DeliveryStatus::AlreadyStored : DeliveryStatus::Delivered;
      out.detail.clear();
      return out;
    case Attempt::Kind::Refused: {
      auto kept = spool_.keepRejected(envelope, a.detail);
      if (!kept.ok()) {
        return Error{kept.error().code,
                     a.detail + "; and it could not be kept: " + kept.error().message};
      }
      out.status = DeliveryStatus::Rejected;
      out.kept_at = std::move(*kept);
      return out;
    }
    case Attempt::Kind::Failed: break;
  }
  auto kept = spool_.keep(envelope);
  if (!kept.ok()) {
    return Error{kept.error().code,
                 "not delivered (" + a.detail + ") and not kept: " + kept.error().message};
  }
  out.status = DeliveryStatus::Spooled;
  out.kept_at = std::move(*kept);
  return out;
}

Result<DeliveryOutcome> SnapshotDelivery::deliver(const v1::SignedSnapshot& envelope) {
  DeliveryOutcome out;
  out.snapshot_id = core::snapshotId(envelope);
  const Attempt a = send(envelope, out.snapshot_id);
  return settle(envelope, std::move(out), a);
}

std::vector<Result<DeliveryOutcome>> SnapshotDelivery::deliverAll(const Envelopes& envelopes) {
  std::vector<std::string> ids;
  ids.reserve(envelopes.size());
  for (const auto* e : envelopes) ids.push_back(core::snapshotId(*e));
  const std::vector<Attempt> attempts = sendAll(envelopes, ids);
  std::vector<Result<DeliveryOutcome>> out;
  out.reserve(envelopes.size());
  for (std::size_t i = 0; i < envelopes.size(); ++i) {
    DeliveryOutcome o;
    o.snapshot_id = ids[i];
    out.push_back(settle(*envelopes[i], std::move(o), attempts[i]));
  }
  return out;
}

FlushReport SnapshotDelivery::flush() {
  FlushReport report;
  auto pending = spool_.pending();
  if (!pending.ok()) {
    report.problems.push_back(pending.error().message);
    return report;
  }
  for (std::size_t from = 0; from < pending->size(); from += kBatchUploads) {
    const std::size_t to = std::min(pending->size(), from + kBatchUploads);
    flushBatch(std::vector<SpoolEntry>(pending->begin() + from, pending->begin() + to), report);
    if (report.remaining > 0) {
      report.remaining += static_cast<int>(pending->size() - to);
      break;
    }
  }
  return report;
}

// Sends one batch of spooled snapshots; removes what was acknowledged, moves what was
// refused to rejected/, counts the rest as remaining.
void SnapshotDelivery::flushBatch(const std::vector<SpoolEntry>& entries, FlushReport& report) {
  std::vector<const SpoolEntry*> sent;
  std::vector<v1::SignedSnapshot> envelopes;
  envelopes.reserve(entries.size());
  for (const SpoolEntry& entry : entries) {
    auto envelope = spool_.read(entry);
    if (!envelope.ok()) {
      if (envelope.error().code == ErrorCode::NotFound) continue;  // flushed by someone else
      auto moved = spool_.reject(entry, envelope.error().message);
      ++report.rejected;
      report.problems.push_back(envelope.error().message +
                                (moved.ok() ? "; moved to " + *moved : ""));
      continue;
    }
    envelopes.push_back(std::move(*envelope));
    sent.push_back(&entry);
  }
  Envelopes pointers;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    pointers.push_back(&envelopes[i]);
    ids.push_back(sent[i]->snapshot_id);
  }
  const std::vector<Attempt> attempts = sendAll(pointers, ids);
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const SpoolEntry& entry = *sent[i];
    const Attempt& a = attempts[i];
    if (a.kind == Attempt::Kind::Acknowledged) {
      ++(a.already_stored ? report.already_stored : report.delivered);
      if (auto st = spool_.remove(entry); !st.ok()) report.problems.push_back(st.error().message);
    } else if (a.kind == Attempt::Kind::Refused) {
      auto moved = spool_.reject(entry, a.detail);
      ++report.rejected;
      report.problems.push_back(
          entry.snapshot_id + ": " + a.detail +
          (moved.ok() ? "; moved to " + *moved : "; " + moved.error().message));
    } else {
      // One line for the first, a count for the others: they failed the same way.
      if (report.remaining == 0) report.problems.push_back(entry.snapshot_id + ": " + a.detail);
      ++report.remaining;
    }
  }
  if (report.remaining > 1) {
    report.problems.push_back(std::to_string(report.remaining - 1) +
                              " more snapshot(s) of this batch not delivered either");
  }
}

}  // namespace ibc::agent
