// Reads (docs/security.md): support certificates list jobs, nodes and snapshots, fetch one
// snapshot and read the collector's counters. One row per request kind, beside its handler
// (requests.h).

#include <array>

#include "ibc/collector/service/requests.h"

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;

namespace {

using Response = v1::CollectorResponse;

Response listJobs(const RequestCall& call) {
  const auto& q = call.request.list_jobs();
  if (q.tenant().empty()) {
    return call.service.reject(call, v1::REJECT_REASON_MALFORMED_REQUEST, "name a tenant");
  }
  auto jobs =
      call.service.store().listJobs(q.tenant(), q.after_job(), call.service.listLimit(q.limit()));
  if (!jobs.ok()) return call.service.failed(call, jobs.error());
  Response r = answerTo(call);
  *r.mutable_jobs() = std::move(*jobs);
  return r;
}

Response listNodes(const RequestCall& call) {
  const auto& q = call.request.list_nodes();
  if (q.tenant().empty()) {
    return call.service.reject(call, v1::REJECT_REASON_MALFORMED_REQUEST, "name a tenant");
  }
  auto nodes = call.service.store().listNodes(q.tenant(), q.job_id());
  if (!nodes.ok()) return call.service.failed(call, nodes.error());
  Response r = answerTo(call);
  *r.mutable_nodes() = std::move(*nodes);
  return r;
}

Response listSnapshots(const RequestCall& call) {
  const auto& q = call.request.list_snapshots();
  auto list = call.service.store().listSnapshots(q, call.service.listLimit(q.limit()));
  if (!list.ok()) return call.service.failed(call, list.error());
  Response r = answerTo(call);
  *r.mutable_snapshots() = std::move(*list);
  return r;
}

// A support engineer reading a tenant's snapshot is logged (snapshot_read): who read what.
Response fetchSnapshot(const RequestCall& call) {
  const auto& q = call.request.fetch();
  auto got = call.service.store().get(q.snapshot_id());
  if (!got.ok()) return call.service.failed(call, got.error());
  const std::string& want_tenant = q.tenant();
  if (!got->has_value() || (!want_tenant.empty() && (*got)->info.tenant() != want_tenant)) {
    return call.service.reject(
        call, v1::REJECT_REASON_NOT_FOUND,
        "no snapshot " + q.snapshot_id().substr(0, 64) +
            (want_tenant.empty() ? "" : " of tenant " + want_tenant.substr(0, 64)));
  }
  auto& stored = **got;
  LogFields fields{{"snapshot", stored.info.snapshot_id()}, {"tenant", stored.info.tenant()}};
  for (auto& f : peerFields(call.peer)) {
    if (f.key != "tenant") fields.push_back({"reader_" + f.key, std::move(f.value)});
  }
  call.service.log().event(LogLevel::Info, "snapshot_read", fields);
  Response r = answerTo(call);
  auto* out = r.mutable_snapshot();
  *out->mutable_info() = std::move(stored.info);
  *out->mutable_signed_snapshot() = std::move(stored.envelope);
  return r;
}

Response stats(const RequestCall& call) {
  Response r = answerTo(call);
  *r.mutable_stats() = call.service.stats();
  return r;
}

using Kind = v1::CollectorRequest;
constexpr std::array<RequestKind, 5> kRows{{
    {Kind::kListJobs, "list_jobs", kSupportRoles, onlySupportReads, answer<listJobs>},
    {Kind::kListNodes, "list_nodes", kSupportRoles, onlySupportReads, answer<listNodes>},
    {Kind::kListSnapshots, "list_snapshots", kSupportRoles, onlySupportReads,
     answer<listSnapshots>},
    {Kind::kFetch, "fetch", kSupportRoles, onlySupportReads, answer<fetchSnapshot>},
    {Kind::kStats, "stats", kSupportRoles, onlySupportReads, answer<stats>},
}};

}  // namespace

std::span<const RequestKind> queryRequestKinds() { return kRows; }

}  // namespace ibc::collector
