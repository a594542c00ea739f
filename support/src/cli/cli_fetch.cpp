// `ibcollect fetch` (support: a job's snapshots from the collector) and the downloads that
// `bundle export --case|--job` and `case` make. Part of ibcollect-support.

#include <cctype>
#include <system_error>

#include "ibc/agent/cli_transport.h"
#include "ibc/client/collector_api.h"
#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::agent::cli {

namespace v1 = ::ibcollect::v1;

namespace {

// ---- fetch -----------------------------------------------------------------------------------

struct FetchArgs {
  std::string job;
  std::string tenant;
  std::string output;
  TransportArgs transport;
};

std::string safeName(std::string s) {
  for (auto& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return s.empty() ? "unknown" : s;
}

}  // namespace

namespace {

// Fetches one snapshot into `out`, checked to hash to its id (else named in `problems`).
core::Status fetchOne(client::CollectorApi& api, const std::string& id, const std::string& tenant,
                      std::vector<FetchedSnapshot>& out, std::vector<std::string>& problems) {
  auto got = api.fetchSnapshot(id, tenant);
  if (!got.ok()) return got.error();
  // The file is exactly what the agent uploaded: the magic, then its bytes.
  std::string file = std::string(core::kSnapshotMagic) + got->signed_snapshot();
  auto envelope = core::decodeSnapshotFile(file);
  if (!envelope.ok() || core::snapshotId(*envelope) != id) {
    problems.push_back("snapshot " + id + " arrived damaged (its bytes do not hash to its id)");
    return {};
  }
  const auto& info = got->info();
  out.push_back({info.tenant(), info.node(), id, std::move(file)});
  return {};
}

}  // namespace

core::Result<std::unique_ptr<client::CollectorSession>> connectCollector(
    const DeliveryConfig& config) {
  TlsCollectorConnector connector(config.collector, config.credentials, config.timeouts);
  return connector.connect();
}

core::Result<std::vector<FetchedSnapshot>> fetchJobSnapshots(const DeliveryConfig& config,
                                                             const std::string& job,
                                                             const std::string& tenant,
                                                             std::vector<std::string>& problems) {
  auto session = connectCollector(config);
  if (!session.ok()) return session.error();
  client::CollectorApi api(**session);
  v1::ListSnapshotsRequest filter;
  filter.set_tenant(tenant);
  filter.set_job_id(job);
  auto infos = api.listSnapshots(std::move(filter));
  if (!infos.ok()) return infos.error();
  std::vector<FetchedSnapshot> out;
  for (const auto& info : *infos) {
    auto one = fetchOne(api, info.snapshot_id(), info.tenant(), out, problems);
    if (!one.ok()) return one.error();
  }
  return out;
}

core::Result<FetchedCase> fetchCase(const DeliveryConfig& config, const std::string& case_id,
                                    const std::string& tenant, std::vector<std::string>& problems) {
  auto session = connectCollector(config);
  if (!session.ok()) return session.error();
  client::CollectorApi api(**session);
  auto got = api.fetchCase(case_id, tenant);
  if (!got.ok()) return got.error();
  FetchedCase out;
  out.info = std::move(*got);
  for (const auto& id : out.info.snapshot_ids()) {
    auto one = fetchOne(api, id, out.info.tenant(), out.snapshots, problems);
    if (!one.ok()) return one.error();
  }
  return out;
}

namespace {

int runFetch(CliEnvironment& env, const FetchArgs& a) {
  auto config = deliveryConfig(env, a.transport, CredentialUse::Support);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  if (auto made = env.writer.makeDirectories(a.output); !made.ok()) {
    env.err << "ibcollect: cannot create " << a.output << ": " << made.error().message << "\n";
    return core::kExitCollectFailed;
  }
  std::vector<std::string> problems;
  auto fetched_snapshots = fetchJobSnapshots(*config, a.job, a.tenant, problems);
  if (!fetched_snapshots.ok()) {
    env.err << "ibcollect: " << fetched_snapshots.error().message << "\n";
    return core::kExitCollectFailed;
  }
  int failed = static_cast<int>(problems.size());
  for (const auto& p : problems) env.err << "ibcollect: " << p << "\n";
  int fetched = 0;
  for (const auto& s : *fetched_snapshots) {
    const std::string path = a.output + "/" + safeName(s.tenant) + "_" + safeName(s.node) + "_" +
                             s.snapshot_id.substr(0, 12) + ".ibsnap";
    if (auto st = env.writer.writeFileAtomic(path, s.file_bytes); !st.ok()) {
      env.err << "ibcollect: " << st.error().message << "\n";
      ++failed;
      continue;
    }
    env.out << path << "\n";
    ++fetched;
  }
  env.err << "ibcollect: fetched " << fetched << " snapshot(s) of job " << a.job
          << (a.tenant.empty() ? std::string() : " (tenant " + a.tenant + ")") << " into "
          << a.output << "\n";
  if (fetched == 0 && failed == 0) {
    env.err << "ibcollect: the collector has no snapshot of job " << a.job << "\n";
    return core::kExitCollectFailed;
  }
  return failed > 0 ? core::kExitCollectFailed : core::kExitOk;
}

}  // namespace

void addFetchCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  auto ga = std::make_shared<FetchArgs>();
  CLI::App* fe = app.add_subcommand(
      "fetch", "Support: download a job's snapshots from the collector (support certificate)");
  fe->add_option("--job", ga->job, "Slurm job id")->required();
  fe->add_option("--tenant", ga->tenant, "Tenant (default: every tenant)");
  fe->add_option("-o,--output", ga->output, "Directory to write FILE.ibsnap into")->required();
  addTransportOptions(fe, ga->transport, /*download=*/true);
  fe->footer(
      helpFooter({"ibcollect fetch --job 1234 --tenant acme -o job1234/ --collector c:7443 \\",
                  "    --ca ca.pem --cert me.pem --key me.key"},
                 kDownloadExitCodes));

  commands.push_back({[fe] { return fe->parsed(); }, [&env, ga] { return runFetch(env, *ga); }});
}

}  // namespace ibc::agent::cli
