#pragma once

// The console's questions to the collector (docs/security.md, console/README.md `jobs`): a support
// certificate lists a tenant's jobs and their nodes, and fetches a job's snapshots to diagnose them
// like opened files. Blocking calls over ibc_client: the window runs them on a worker thread (never
// on the GUI thread) with progress and cancel.

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ibc/client/collector_client.h"
#include "ibc/console/job_data.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::console {

struct CollectorSettings {
  std::string endpoint;  // host:port
  std::string ca_file, cert_file, key_file;
};

// The PEM files read and the endpoint parsed. Errors name the file or the flag.
core::Result<client::TlsCredentials> readCredentials(const CollectorSettings& settings);

struct JobEntry {
  std::string job_id;
  std::vector<::ibcollect::v1::NodeSummary> nodes;
};

// A tenant's jobs (every page of them) with their nodes. Errors: the connection, or the
// collector's rejection in words (e.g. an agent certificate: support only).
core::Result<std::vector<JobEntry>> listTenantJobs(const CollectorSettings& settings,
                                                   const std::string& tenant);

// Fetches every snapshot of `job_id` of `tenant` (the newest per node unless `all`) and
// diagnoses them as loadSnapshotFiles does; each node's source is "collector:<id>". Every
// snapshot must hash to its id and its signature must hold against the CA of `settings`
// (refused ones go to `errors`). A connection lost on the way (the collector died) is an
// error for the whole fetch, naming how far it got: half a job never passes for the job.
// `progress(done, total)` after each snapshot; `cancel` stops before the next one.
core::Result<JobData> fetchJob(const CollectorSettings& settings, const std::string& tenant,
                               const std::string& job_id, bool all = false,
                               const std::function<void(std::size_t, std::size_t)>& progress = {},
                               const std::atomic<bool>* cancel = nullptr);

// Cases (docs/security.md): a support certificate lists, creates and updates them; the escalate
// page creates one from the nodes and finding codes picked, the jobs page lists them.
// Errors: the connection, or the collector's rejection in words.
core::Result<std::vector<::ibcollect::v1::Case>> listCases(const CollectorSettings& settings,
                                                           const std::string& tenant);
core::Result<::ibcollect::v1::Case> createCase(const CollectorSettings& settings,
                                               const ::ibcollect::v1::CreateCaseRequest& request);
core::Result<::ibcollect::v1::Case> updateCase(const CollectorSettings& settings,
                                               const ::ibcollect::v1::UpdateCaseRequest& request);

}  // namespace ibc::console
