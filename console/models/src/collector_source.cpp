#include "ibc/console/collector_source.h"

#include <map>

#include "ibc/client/collector_api.h"
#include "ibc/core/protocol.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Result<std::string> readPem(const std::string& path, const char* flag) {
  if (path.empty()) return Error{ErrorCode::InvalidArgument, std::string(flag) + " is not set"};
  constexpr std::size_t kMaxPemBytes = 1u << 20;  // a certificate chain or key is a few KiB
  auto pem = os::RootedFilesystem("").readFile(path, kMaxPemBytes);
  if (!pem.ok()) return Error{pem.error().code, std::string(flag) + " " + pem.error().message};
  return pem;
}

// One connection and the typed calls over it.
struct Connected {
  std::unique_ptr<client::CollectorConnection> connection;
  client::CollectorApi api{*connection};
};

Result<std::unique_ptr<Connected>> connect(const CollectorSettings& settings) {
  auto endpoint = core::parseCollectorEndpoint(settings.endpoint);
  if (!endpoint.ok())
    return Error{endpoint.error().code, "--collector: " + endpoint.error().message};
  auto credentials = readCredentials(settings);
  if (!credentials.ok()) return credentials.error();
  auto connection = client::CollectorConnection::open(*endpoint, *credentials, {});
  if (!connection.ok())
    return Error{connection.error().code, "cannot reach the collector at " + endpoint->text() +
                                              ": " + connection.error().message};
  return std::make_unique<Connected>(Connected{std::move(*connection)});
}

// Every snapshot the collector holds of the job, page by page.
Result<std::vector<v1::SnapshotInfo>> listJobSnapshots(Connected& session,
                                                       const std::string& tenant,
                                                       const std::string& job_id) {
  v1::ListSnapshotsRequest filter;
  filter.set_tenant(tenant);
  filter.set_job_id(job_id);
  auto infos = session.api.listSnapshots(std::move(filter));
  if (!infos.ok()) return infos.error();
  if (infos->empty())
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
  auto listed = (*session)->api.listJobs(tenant);
  if (!listed.ok()) return listed.error();
  std::vector<JobEntry> jobs;
  for (const auto& j : *listed) {
    auto nodes = (*session)->api.listNodes(tenant, j.job_id());
    if (!nodes.ok()) return nodes.error();
    jobs.push_back({j.job_id(), std::move(*nodes)});
  }
  return jobs;
}

Result<JobData> fetchJob(const CollectorSettings& settings, const std::string& tenant,
                         const std::string& job_id, bool all,
                         const std::function<void(std::size_t, std::size_t)>& progress,
                         const std::atomic<bool>* cancel) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  auto listed = listJobSnapshots(**session, tenant, job_id);
  if (!listed.ok()) return listed.error();
  std::vector<v1::SnapshotInfo> infos = all ? std::move(*listed) : newestPerNode(*listed);
  // The collector checked each signature on upload; the console checks again with the same
  // CA, so a snapshot is never shown on the collector's word alone.
  auto credentials = readCredentials(settings);
  if (!credentials.ok()) return credentials.error();
  auto verifier = core::SignatureVerifier::fromPem(credentials->ca_pem);
  if (!verifier.ok()) return Error{verifier.error().code, "--ca: " + verifier.error().message};
  // One snapshot parsed whole at a time (a 2,000-node job is judged as it arrives).
  JobAssembler assembled;
  std::vector<std::string> errors;
  bool cancelled = false;
  for (std::size_t k = 0; k < infos.size(); ++k) {
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    auto answer = (*session)->api.fetchSnapshot(infos[k].snapshot_id(), tenant);
    const std::string name = "collector:" + infos[k].snapshot_id().substr(0, 12);
    if (!answer.ok() && !client::isRejection(answer.error())) {
      // The connection is gone (the collector stopped or the network broke): every later
      // request would fail the same way, and half a job must not pass for the whole job.
      return Error{answer.error().code, "the collector at " + settings.endpoint +
                                            " stopped answering after " + std::to_string(k) +
                                            " of " + std::to_string(infos.size()) +
                                            " snapshots: " + answer.error().message};
    }
    if (!answer.ok()) {
      errors.push_back(name + " (" + infos[k].node() + "): " + answer.error().message);
    } else {
      auto envelope = core::parseSignedEnvelope(answer->signed_snapshot());
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
        SnapshotSource source;
        source.file = name;
        source.id = infos[k].snapshot_id();
        source.described = true;
        source.signer = describeSigner(*envelope, *snap, verifier->get() != nullptr);
        source.trust = withSigner(checked.words, source.signer);
        source.signed_bytes = core::encodeSnapshotFile(*envelope);
        source.size = source.signed_bytes.size();
        assembled.add(std::move(*snap), std::move(source));
      }
    }
    if (progress) progress(k + 1, infos.size());
  }
  JobData job = assembled.finish();
  job.errors.insert(job.errors.begin(), errors.begin(), errors.end());
  job.origin = "collector " + settings.endpoint + ", tenant " + tenant + ", job " + job_id;
  job.cancelled = cancelled;
  job.tenant = tenant;
  job.groups = {{tenant, job_id, {}, true}};  // one job of one tenant, as asked
  return job;
}

Result<std::vector<v1::Case>> listCases(const CollectorSettings& settings,
                                        const std::string& tenant) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  v1::ListCasesRequest filter;
  filter.set_tenant(tenant);
  auto listed = (*session)->api.listCases(std::move(filter));
  if (!listed.ok()) return listed.error();
  return std::move(listed->cases);
}

Result<v1::Case> createCase(const CollectorSettings& settings,
                            const v1::CreateCaseRequest& request) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  return (*session)->api.createCase(request);
}

Result<v1::Case> updateCase(const CollectorSettings& settings,
                            const v1::UpdateCaseRequest& request) {
  auto session = connect(settings);
  if (!session.ok()) return session.error();
  return (*session)->api.updateCase(request);
}

}  // namespace ibc::console
