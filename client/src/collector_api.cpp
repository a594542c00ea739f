#include "ibc/client/collector_api.h"

#include <utility>

#include "ibc/core/protocol.h"

namespace ibc::client {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::ErrorCode;
using core::Result;
using Kind = v1::CollectorResponse::KindCase;

namespace {

constexpr std::string_view kRefused = "the collector refused: ";

// The part of an answer a call asked for (moved out), or the call's error.
template <typename Part>
Result<Part> partOf(Result<v1::CollectorResponse> answer, Part* (v1::CollectorResponse::*part)()) {
  if (!answer.ok()) return answer.error();
  return std::move(*((*answer).*part)());
}

}  // namespace

bool isRejection(const Error& error) {
  return error.code == ErrorCode::PermissionDenied && error.message.rfind(kRefused, 0) == 0;
}

Result<v1::CollectorResponse> CollectorApi::call(v1::CollectorRequest request, Kind expected,
                                                 const char* what) {
  auto answer = session_.call(std::move(request));
  if (!answer.ok()) return answer.error();
  if (answer->has_rejection()) {
    return Error{ErrorCode::PermissionDenied,
                 std::string(kRefused) + core::describeRejection(answer->rejection())};
  }
  if (answer->kind_case() != expected) {
    return Error{ErrorCode::Malformed,
                 std::string("the collector answered something other than ") + what};
  }
  return answer;
}

Result<std::vector<v1::JobSummary>> CollectorApi::listJobs(const std::string& tenant) {
  std::vector<v1::JobSummary> jobs;
  v1::CollectorRequest r;
  r.mutable_list_jobs()->set_tenant(tenant);
  for (;;) {
    auto page = call(r, Kind::kJobs, "a job list");
    if (!page.ok()) return page.error();
    auto& got = *page->mutable_jobs()->mutable_jobs();
    for (auto& j : got) jobs.push_back(std::move(j));
    if (!page->jobs().more() || got.empty()) return jobs;
    r.mutable_list_jobs()->set_after_job(jobs.back().job_id());
  }
}

Result<std::vector<v1::NodeSummary>> CollectorApi::listNodes(const std::string& tenant,
                                                             const std::string& job_id) {
  v1::CollectorRequest r;
  r.mutable_list_nodes()->set_tenant(tenant);
  r.mutable_list_nodes()->set_job_id(job_id);
  auto answer = call(std::move(r), Kind::kNodes, "a node list");
  if (!answer.ok()) return answer.error();
  auto& nodes = *answer->mutable_nodes()->mutable_nodes();
  return std::vector<v1::NodeSummary>(std::make_move_iterator(nodes.begin()),
                                      std::make_move_iterator(nodes.end()));
}

Result<std::vector<v1::SnapshotInfo>> CollectorApi::listSnapshots(v1::ListSnapshotsRequest filter) {
  std::vector<v1::SnapshotInfo> infos;
  v1::CollectorRequest r;
  *r.mutable_list_snapshots() = std::move(filter);
  do {
    auto page = call(r, Kind::kSnapshots, "a snapshot list");
    if (!page.ok()) return page.error();
    for (auto& info : *page->mutable_snapshots()->mutable_snapshots()) {
      infos.push_back(std::move(info));
    }
    r.mutable_list_snapshots()->set_page_token(page->snapshots().next_page_token());
  } while (!r.list_snapshots().page_token().empty());
  return infos;
}

Result<v1::FetchedSnapshot> CollectorApi::fetchSnapshot(const std::string& snapshot_id,
                                                        const std::string& tenant) {
  v1::CollectorRequest r;
  r.mutable_fetch()->set_snapshot_id(snapshot_id);
  r.mutable_fetch()->set_tenant(tenant);
  return partOf(call(std::move(r), Kind::kSnapshot, "a snapshot"),
                &v1::CollectorResponse::mutable_snapshot);
}

Result<v1::CollectorStats> CollectorApi::stats() {
  v1::CollectorRequest r;
  r.mutable_stats();
  return partOf(call(std::move(r), Kind::kStats, "its counters"),
                &v1::CollectorResponse::mutable_stats);
}

Result<CaseListing> CollectorApi::listCases(v1::ListCasesRequest filter, std::size_t max_cases) {
  CaseListing out;
  v1::CollectorRequest r;
  *r.mutable_list_cases() = std::move(filter);
  for (;;) {
    auto page = call(r, Kind::kCases, "a case list");
    if (!page.ok()) return page.error();
    auto& got = *page->mutable_cases()->mutable_cases();
    for (auto& c : got) out.cases.push_back(std::move(c));
    out.more = page->cases().more() && !got.empty();
    if (!out.more || (max_cases != 0 && out.cases.size() >= max_cases)) return out;
    // Cases sort by tenant, then id: the next page starts after the last one received.
    const auto& last = out.cases.back();
    r.mutable_list_cases()->set_after_case(last.tenant() + "/" + last.case_id());
  }
}

Result<v1::Case> CollectorApi::createCase(v1::CreateCaseRequest request) {
  v1::CollectorRequest r;
  *r.mutable_create_case() = std::move(request);
  return partOf(call(std::move(r), Kind::kCaseInfo, "a case"),
                &v1::CollectorResponse::mutable_case_info);
}

Result<v1::Case> CollectorApi::updateCase(v1::UpdateCaseRequest request) {
  v1::CollectorRequest r;
  *r.mutable_update_case() = std::move(request);
  return partOf(call(std::move(r), Kind::kCaseInfo, "a case"),
                &v1::CollectorResponse::mutable_case_info);
}

Result<v1::Case> CollectorApi::fetchCase(const std::string& case_id, const std::string& tenant) {
  v1::CollectorRequest r;
  r.mutable_fetch_case()->set_case_id(case_id);
  r.mutable_fetch_case()->set_tenant(tenant);
  return partOf(call(std::move(r), Kind::kCaseInfo, "a case"),
                &v1::CollectorResponse::mutable_case_info);
}

}  // namespace ibc::client
