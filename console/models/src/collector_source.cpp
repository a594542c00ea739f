#include "ibc/console/collector_source.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "ibc/core/protocol.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Result<std::string> readPem(const std::string& path, const char* flag) {
  if (path.empty()) return Error{ErrorCode::InvalidArgument, std::string(flag) + " is not set"};
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{ErrorCode::NotFound, std::string(flag) + " " + path + ": " + std::strerror(errno)};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Connected {
  std::unique_ptr<client::CollectorConnection> connection;
  uint64_t next_id = 1;

  Result<v1::CollectorResponse> call(v1::CollectorRequest request) {
    request.set_request_id(next_id++);
    auto answer = connection->call(std::move(request));
    if (!answer.ok()) return answer.error();
    if (answer->has_rejection())
      return Error{ErrorCode::PermissionDenied,
                   "the collector refused: " + core::describeRejection(answer->rejection())};
    return answer;
  }
};

Result<Connected> connect(const CollectorSettings& settings) {
  auto endpoint = core::parseCollectorEndpoint(settings.endpoint);
  if (!endpoint.ok())
    return Error{endpoint.error().code, "--collector: " + endpoint.error().message};
  auto credentials = readCredentials(settings);
  if (!credentials.ok()) return credentials.error();
  auto connection = client::CollectorConnection::open(*endpoint, *credentials, {});
  if (!connection.ok())
    return Error{connection.error().code, "cannot reach the collector at " + endpoint->text() +
                                              ": " + connection.error().message};
  return Connected{std::move(*connection)};
}

// Every snapshot the collector holds of the job, page by page.
Result<std::vector<v1::SnapshotInfo>> listJobSnapshots(Connected& session,
                                                       const std::string& tenant,
                                                       const std::string& job_id) {
  std::vector<v1::SnapshotInfo> infos;
  std::string token;
  do {
    v1::CollectorRequest r;
    r.mutable_list_snapshots()->set_tenant(tenant);
    r.mutable_list_snapshots()->set_job_id(job_id);
    r.mutable_list_snapshots()->set_page_token(token);
    auto answer = session.call(std::move(r));
    if (!answer.ok()) return answer.error();
    if (!answer->has_snapshots())
      return Error{ErrorCode::Malformed, "the collector answered no snapshot list"};
    infos.insert(infos.end(), answer->snapshots().snapshots().begin(),
                 answer->snapshots().snapshots().end());
    token = answer->snapshots().next_page_token();
  } while (!token.empty());
  if (infos.empty())
    return Error{ErrorCode::NotFound,
                 "the collector has no snapshot of job " + job_id + " for tenant " + tenant};
  return infos;
}

// The newest snapshot of each node: what the node looks like now.
std::vector<v1::SnapshotInfo> newestPerNode(const std::vector<v1::SnapshotInfo>& infos) {
  std::map<std::string, v1::SnapshotInfo> newest;
  for (const auto& i : infos) {
    auto it = newest.find(i.node());
    if (it == newest.end() || i.collected_at_unix_ms() > it->second.collected_at_unix_ms())
      newest[i.node()] = i;
  }
  std::vector<v1::SnapshotInfo> out;
  for (auto& [node, i] : newest) out.push_back(std::move(i));
  return out;
}

}  // namespace

Result<client::TlsCredentials> readCredentials(const CollectorSettings& settings) {
  client::TlsCredentials c;
  auto ca = readPem(settings.ca_file, "--ca");
  if (!ca.ok()) return ca.error();
  auto cert = readPem(settings.cert_file, "--cert");
  if (!cert.ok()) return cert.error();
  auto key = readPem(settings.key_file, "--key");
  if (!key.ok()) return key.error();
  c.ca_pem = std::move(*ca);
  c.certificate_pem = std::move(*cert);
  c.key_pem = std::move(*key);
  return c;
}

Result<std::vector<JobEntry>> listTenantJobs(const CollectorSettings& settings,
                                             const std::string& tenant) {
  if (tenant.empty()) return Error{ErrorCode::InvalidArgument, "no tenant given"};
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  std::vector<JobEntry> jobs;
  std::string after;
  for (;;) {
    v1::CollectorRequest r;
    r.mutable_list_jobs()->set_tenant(tenant);
    r.mutable_list_jobs()->set_after_job(after);
    auto answer = session->call(std::move(r));
    if (!answer.ok()) return answer.error();
    if (!answer->has_jobs())
      return Error{ErrorCode::Malformed, "the collector answered no job list"};
    for (const auto& j : answer->jobs().jobs()) jobs.push_back({j.job_id(), {}});
    if (!answer->jobs().more() || answer->jobs().jobs().empty()) break;
    after = answer->jobs().jobs().rbegin()->job_id();
  }
  for (auto& j : jobs) {
    v1::CollectorRequest r;
    r.mutable_list_nodes()->set_tenant(tenant);
    r.mutable_list_nodes()->set_job_id(j.job_id);
    auto answer = session->call(std::move(r));
    if (!answer.ok()) return answer.error();
    if (answer->has_nodes())
      j.nodes.assign(answer->nodes().nodes().begin(), answer->nodes().nodes().end());
  }
  return jobs;
}

Result<JobData> fetchJob(const CollectorSettings& settings, const std::string& tenant,
                         const std::string& job_id, bool all,
                         const std::function<void(std::size_t, std::size_t)>& progress,
                         const std::atomic<bool>* cancel) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  auto listed = listJobSnapshots(*session, tenant, job_id);
  if (!listed.ok()) return listed.error();
  std::vector<v1::SnapshotInfo> infos = all ? std::move(*listed) : newestPerNode(*listed);
  // The collector checked each signature on upload; the console checks again with the same
  // CA, so a snapshot is never shown on the collector's word alone.
  auto credentials = readCredentials(settings);
  if (!credentials.ok()) return credentials.error();
  auto verifier = core::SignatureVerifier::fromPem(credentials->ca_pem);
  if (!verifier.ok()) return Error{verifier.error().code, "--ca: " + verifier.error().message};
  std::vector<v1::Snapshot> snapshots;
  std::vector<std::string> sources;
  std::vector<std::string> ids;
  std::vector<std::string> trust;
  std::vector<SignerInfo> signers;
  std::vector<std::string> signed_files;
  std::vector<std::string> errors;
  bool cancelled = false;
  for (std::size_t k = 0; k < infos.size(); ++k) {
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    v1::CollectorRequest r;
    r.mutable_fetch()->set_snapshot_id(infos[k].snapshot_id());
    r.mutable_fetch()->set_tenant(tenant);
    auto answer = session->call(std::move(r));
    const std::string name = "collector:" + infos[k].snapshot_id().substr(0, 12);
    if (!answer.ok() && answer.error().code != ErrorCode::PermissionDenied) {
      // The connection is gone (the collector stopped or the network broke): every later
      // request would fail the same way, and half a job must not pass for the whole job.
      return Error{answer.error().code, "the collector at " + settings.endpoint +
                                            " stopped answering after " + std::to_string(k) +
                                            " of " + std::to_string(infos.size()) +
                                            " snapshots: " + answer.error().message};
    }
    if (!answer.ok()) {
      errors.push_back(name + " (" + infos[k].node() + "): " + answer.error().message);
    } else if (!answer->has_snapshot()) {
      errors.push_back(name + " (" + infos[k].node() + "): the collector answered no snapshot");
    } else {
      auto envelope = core::parseSignedEnvelope(answer->snapshot().signed_snapshot());
      auto checked =
          envelope.ok() ? checkSnapshotSignature(*envelope, verifier->get()) : SignatureTrust{};
      auto snap =
          envelope.ok() ? core::openSnapshot(*envelope) : Result<v1::Snapshot>(envelope.error());
      if (envelope.ok() && core::snapshotId(*envelope) != infos[k].snapshot_id()) {
        errors.push_back(name + " (" + infos[k].node() +
                         "): arrived damaged (its bytes do not hash to its id)");
      } else if (checked.refused) {
        errors.push_back(name + " (" + infos[k].node() + "): " + checked.words);
      } else if (!snap.ok()) {
        errors.push_back(name + " (" + infos[k].node() + "): " + snap.error().message);
      } else {
        snapshots.push_back(std::move(*snap));
        sources.push_back(name);
        ids.push_back(infos[k].snapshot_id());
        SignerInfo signer = describeSigner(*envelope, snapshots.back(), verifier->get() != nullptr);
        trust.push_back(withSigner(checked.words, signer));
        signers.push_back(std::move(signer));
        signed_files.push_back(core::encodeSnapshotFile(*envelope));
      }
    }
    if (progress) progress(k + 1, infos.size());
  }
  JobData job = diagnoseSnapshots(std::move(snapshots), sources);
  job.trust = std::move(trust);
  job.signers = std::move(signers);
  job.signed_files = std::move(signed_files);
  job.errors.insert(job.errors.begin(), errors.begin(), errors.end());
  job.origin = "collector " + settings.endpoint + ", tenant " + tenant + ", job " + job_id;
  job.cancelled = cancelled;
  job.tenant = tenant;
  job.groups = {{tenant, job_id, {}, true}};  // one job of one tenant, as asked
  job.snapshot_ids = std::move(ids);
  return job;
}

Result<std::vector<v1::Case>> listCases(const CollectorSettings& settings,
                                        const std::string& tenant) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  std::vector<v1::Case> out;
  v1::CollectorRequest list;
  list.mutable_list_cases()->set_tenant(tenant);
  for (;;) {
    auto page = session->call(list);
    if (!page.ok()) return page.error();
    if (!page->has_cases())
      return Error{ErrorCode::Malformed, "the collector answered no case list"};
    for (auto& c : *page->mutable_cases()->mutable_cases()) out.push_back(std::move(c));
    if (!page->cases().more() || out.empty()) break;
    list.mutable_list_cases()->set_after_case(out.back().tenant() + "/" + out.back().case_id());
  }
  return out;
}

namespace {

Result<v1::Case> caseCall(const CollectorSettings& settings, v1::CollectorRequest request) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  auto answer = session->call(std::move(request));
  if (!answer.ok()) return answer.error();
  if (!answer->has_case_info())
    return Error{ErrorCode::Malformed, "the collector answered no case"};
  return std::move(*answer->mutable_case_info());
}

}  // namespace

Result<v1::Case> createCase(const CollectorSettings& settings,
                            const v1::CreateCaseRequest& request) {
  v1::CollectorRequest r;
  *r.mutable_create_case() = request;
  return caseCall(settings, std::move(r));
}

Result<v1::Case> updateCase(const CollectorSettings& settings,
                            const v1::UpdateCaseRequest& request) {
  v1::CollectorRequest r;
  *r.mutable_update_case() = request;
  return caseCall(settings, std::move(r));
}

}  // namespace ibc::console
