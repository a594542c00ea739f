#pragma once

// Typed calls of the collector protocol (proto/ibcollect/v1/collector.proto) over one
// session: each builds its request, checks that the answer is the kind it asked for, pages
// through lists, and turns a rejection into an Error (PermissionDenied, "the collector
// refused: REASON: message"). The agent's support commands and the console call these;
// uploads go through delivery (pipelined, spooled), the only other CollectorRequest
// builder. A new request kind is one call here.
//
// Errors besides a rejection: those of CollectorSession::call (Io, Timeout: the connection
// is gone; Malformed: an answer of another kind).

#include <cstddef>
#include <string>
#include <vector>

#include "ibc/client/collector_client.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::client {

// A page of cases and whether the collector holds more than were asked for.
struct CaseListing {
  std::vector<::ibcollect::v1::Case> cases;
  bool more = false;
};

class CollectorApi {
 public:
  // `session` must outlive the CollectorApi.
  explicit CollectorApi(CollectorSession& session) : session_(session) {}

  // Every job of `tenant` the collector holds snapshots of, page after page.
  core::Result<std::vector<::ibcollect::v1::JobSummary>> listJobs(const std::string& tenant);
  // The nodes of a tenant's job (every node of the tenant when `job_id` is empty).
  core::Result<std::vector<::ibcollect::v1::NodeSummary>> listNodes(const std::string& tenant,
                                                                    const std::string& job_id);
  // Every snapshot `filter` selects, page after page (its page_token is where to start).
  core::Result<std::vector<::ibcollect::v1::SnapshotInfo>> listSnapshots(
      ::ibcollect::v1::ListSnapshotsRequest filter);
  // One snapshot, exactly as uploaded; with a `tenant`, refused unless it is that tenant's.
  core::Result<::ibcollect::v1::FetchedSnapshot> fetchSnapshot(const std::string& snapshot_id,
                                                               const std::string& tenant);
  core::Result<::ibcollect::v1::CollectorStats> stats();

  // The cases `filter` selects, page after page, until `max_cases` (0: every one); `more`
  // says the collector holds more than were returned.
  core::Result<CaseListing> listCases(::ibcollect::v1::ListCasesRequest filter,
                                      std::size_t max_cases = 0);
  core::Result<::ibcollect::v1::Case> createCase(::ibcollect::v1::CreateCaseRequest request);
  core::Result<::ibcollect::v1::Case> updateCase(::ibcollect::v1::UpdateCaseRequest request);
  // With a `tenant`, refused unless the case is that tenant's.
  core::Result<::ibcollect::v1::Case> fetchCase(const std::string& case_id,
                                                const std::string& tenant);

 private:
  // One call; a rejection is an Error, as is an answer of a kind other than `expected`.
  core::Result<::ibcollect::v1::CollectorResponse> call(
      ::ibcollect::v1::CollectorRequest request,
      ::ibcollect::v1::CollectorResponse::KindCase expected, const char* what);

  CollectorSession& session_;
};

// True for the error of a rejection (the collector answered; the connection still works),
// false for a connection that failed.
bool isRejection(const core::Error& error);

}  // namespace ibc::client
