// `ibcollect upload`, `flush`, `verify`, and the transport half of `snapshot`.

#include "ibc/agent/cli_transport.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::agent::cli {

namespace v1 = ::ibcollect::v1;

namespace {

constexpr std::size_t kMaxPemBytes = 1u << 20;

std::string shortId(const std::string& id) { return id.substr(0, 16); }

}  // namespace

core::Result<std::string> readPem(CliEnvironment& env, const std::string& path) {
  return env.files.readFile(path, kMaxPemBytes);
}

std::optional<core::SnapshotSigner> signerFromArgs(CliEnvironment& env, const TransportArgs& args,
                                                   const char* missing) {
  auto settings = transportSettings(env, args);
  if (!settings.ok()) {
    env.err << "ibcollect: " << settings.error().message << "\n";
    return std::nullopt;
  }
  if (settings->cert.empty() || settings->key.empty()) {
    env.err << "ibcollect: " << missing << "\n";
    return std::nullopt;
  }
  auto cert = readPem(env, settings->cert);
  auto key = cert.ok() ? readPem(env, settings->key) : core::Result<std::string>(cert.error());
  auto signer = key.ok() ? core::SnapshotSigner::fromPem(*cert, *key)
                         : core::Result<core::SnapshotSigner>(key.error());
  if (!signer.ok()) {
    env.err << "ibcollect: " << settings->cert << " / " << settings->key << ": "
            << signer.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*signer);
}

std::unique_ptr<core::SignatureVerifier> verifierFromArgs(CliEnvironment& env,
                                                          const TransportArgs& args,
                                                          const char* missing) {
  auto settings = transportSettings(env, args);
  if (!settings.ok()) {
    env.err << "ibcollect: " << settings.error().message << "\n";
    return nullptr;
  }
  if (settings->ca.empty()) {
    env.err << "ibcollect: " << missing << "\n";
    return nullptr;
  }
  auto ca = readPem(env, settings->ca);
  auto verifier = ca.ok() ? core::SignatureVerifier::fromPem(*ca)
                          : core::Result<std::unique_ptr<core::SignatureVerifier>>(ca.error());
  if (!verifier.ok()) {
    env.err << "ibcollect: " << settings->ca << ": " << verifier.error().message << "\n";
    return nullptr;
  }
  return std::move(*verifier);
}

namespace {

SnapshotDelivery makeDelivery(CliEnvironment& env, TlsCollectorConnector& connector, Spool& spool,
                              const DeliveryConfig& config) {
  return SnapshotDelivery(connector, spool, env.clock, config.retry,
                          [&env](const std::string& m) { env.err << "ibcollect: " << m << "\n"; });
}

// Tells the user what happened to one snapshot. False when it was not delivered.
// `kept_in`: a file that already holds the snapshot (snapshot -o, --job --out, the file
// being uploaded), or empty.
bool report(CliEnvironment& env, const std::string& what, const std::string& where,
            const core::Result<DeliveryOutcome>& outcome, const std::string& kept_in = {}) {
  if (!outcome.ok()) {
    if (!kept_in.empty()) {
      env.err << "ibcollect: " << what
              << " was not delivered and could not be spooled: " << outcome.error().message
              << "\nibcollect: it is saved in " << kept_in << ": `ibcollect upload " << kept_in
              << "` sends it later\n";
      return false;
    }
    env.err << "ibcollect: ERROR: " << what
            << " was NOT delivered and NOT kept: " << outcome.error().message
            << "\nibcollect: nothing holds this snapshot now: free space in the spool (or raise "
               "--spool-limit-mb, or choose --spool DIR) and run again\n";
    return false;
  }
  const auto& o = *outcome;
  switch (o.status) {
    case DeliveryStatus::Delivered:
      env.err << "ibcollect: delivered " << what << " to " << where << " (snapshot "
              << shortId(o.snapshot_id) << ")\n";
      return true;
    case DeliveryStatus::AlreadyStored:
      env.err << "ibcollect: " << where << " already had " << what << " (snapshot "
              << shortId(o.snapshot_id) << ")\n";
      return true;
    case DeliveryStatus::Spooled:
      env.err << "ibcollect: could not deliver " << what << " to " << where << " after "
              << o.attempts << " attempt(s): " << o.detail
              << "\nibcollect: kept in the spool: " << o.kept_at
              << " (`ibcollect flush` sends it)\n";
      return false;
    case DeliveryStatus::Rejected:
      env.err << "ibcollect: " << what << " was refused for good: " << o.detail
              << "\nibcollect: kept in " << o.kept_at << " (not retried)\n";
      return false;
  }
  return false;
}

// Delivers `uploads` in one batch and reports each, or the delivered ones in one line.
// Returns how many were not delivered.
std::size_t deliverAndReport(CliEnvironment& env, SnapshotDelivery& delivery,
                             const std::string& where, const std::vector<CollectedUpload>& uploads,
                             BatchReport how) {
  std::vector<const v1::SignedSnapshot*> envelopes;
  for (const auto& u : uploads) envelopes.push_back(u.envelope);
  const auto started = env.clock.steadyNow();
  const auto outcomes = delivery.deliverAll(envelopes);
  const double seconds = std::chrono::duration<double>(env.clock.steadyNow() - started).count();
  std::size_t failed = 0;
  std::size_t delivered = 0;
  std::size_t already = 0;
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    const auto& o = outcomes[i];
    if (how == BatchReport::Summary && o.ok() && o->delivered()) {
      ++(o->status == DeliveryStatus::AlreadyStored ? already : delivered);
      continue;
    }
    if (!report(env, uploads[i].what, where, o, uploads[i].kept_in)) ++failed;
  }
  if (how == BatchReport::Summary && delivered + already > 0) {
    env.err << "ibcollect: delivered " << delivered + already << " of " << uploads.size()
            << " snapshot(s) to " << where;
    if (already > 0) env.err << " (" << already << " already there)";
    char took[32];
    std::snprintf(took, sizeof took, " in %.2f s", seconds);
    env.err << took << "\n";
  }
  return failed;
}

core::Result<v1::SignedSnapshot> readSnapshotFile(CliEnvironment& env, const std::string& path) {
  auto bytes = env.files.readFile(path, core::kMaxSnapshotFileBytes);
  if (!bytes.ok()) return bytes.error();
  return core::decodeSnapshotFile(*bytes);
}

}  // namespace

core::Result<DeliveryConfig> deliveryConfig(CliEnvironment& env, const TransportArgs& args,
                                            CredentialUse use) {
  auto settings = transportSettings(env, args);
  if (!settings.ok()) return settings.error();
  auto config = loadDeliveryConfig(*settings, env.files);
  if (!config.ok()) return config.error();
  if (auto st = checkLocalCredentials(config->credentials, use, settings->cert, settings->key);
      !st.ok()) {
    return st.error();
  }
  return config;
}

namespace {

// ---- upload ----------------------------------------------------------------------------------

struct UploadArgs {
  std::vector<std::string> files;
  TransportArgs transport;
};

int runUpload(CliEnvironment& env, const UploadArgs& a) {
  auto config = deliveryConfig(env, a.transport, CredentialUse::Upload);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  TlsCollectorConnector connector(config->collector, config->credentials, config->timeouts);
  Spool spool(config->spool_dir, config->spool_limits, env.files, env.writer);
  auto delivery = makeDelivery(env, connector, spool, *config);
  std::size_t failed = 0;
  // Every file is read before sending, so all go over one connection, pipelined.
  std::vector<v1::SignedSnapshot> envelopes;
  std::vector<std::string> files;
  envelopes.reserve(a.files.size());
  for (const auto& file : a.files) {
    auto envelope = readSnapshotFile(env, file);
    if (!envelope.ok()) {
      env.err << "ibcollect: " << file << ": " << envelope.error().message << "\n";
      ++failed;
      continue;
    }
    if (envelope->signature().empty()) {
      env.err << "ibcollect: " << file
              << ": unsigned; the collector takes signed snapshots only (take them with "
                 "`ibcollect snapshot --cert C --key K`)\n";
      ++failed;
      continue;
    }
    envelopes.push_back(std::move(*envelope));
    files.push_back(file);
  }
  std::vector<CollectedUpload> uploads;
  for (std::size_t i = 0; i < envelopes.size(); ++i) {
    uploads.push_back({&envelopes[i], files[i], files[i]});
  }
  failed +=
      deliverAndReport(env, delivery, connector.describe(), uploads, BatchReport::EachSnapshot);
  return failed > 0 ? core::kExitCollectFailed : core::kExitOk;
}

// ---- flush -----------------------------------------------------------------------------------

int runFlush(CliEnvironment& env, const TransportArgs& a) {
  auto config = deliveryConfig(env, a, CredentialUse::Upload);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  TlsCollectorConnector connector(config->collector, config->credentials, config->timeouts);
  Spool spool(config->spool_dir, config->spool_limits, env.files, env.writer);
  auto pending = spool.pending();
  if (!pending.ok()) {
    env.err << "ibcollect: " << pending.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (pending->empty()) {
    env.out << "spool " << spool.dir() << " is empty: nothing to send\n";
    return core::kExitOk;
  }
  auto delivery = makeDelivery(env, connector, spool, *config);
  const FlushReport r = delivery.flush();
  for (const auto& p : r.problems) env.err << "ibcollect: " << p << "\n";
  env.out << "flush to " << connector.describe() << ": " << r.delivered << " delivered, "
          << r.already_stored << " already stored, " << r.rejected << " refused (kept in "
          << spool.dir() << "/rejected), " << r.remaining << " still in " << spool.dir() << "\n";
  return r.remaining > 0 || r.rejected > 0 || !r.problems.empty() ? core::kExitCollectFailed
                                                                  : core::kExitOk;
}

// ---- verify ----------------------------------------------------------------------------------

struct VerifyArgs {
  std::vector<std::string> files;
  TransportArgs transport;
};

int runVerify(CliEnvironment& env, const VerifyArgs& a) {
  auto verifier = verifierFromArgs(env, a.transport, "verify needs --ca CA.pem");
  if (verifier == nullptr) return core::kExitUsage;
  int failed = 0;      // did not verify (exit 5)
  int unreadable = 0;  // could not be read (exit 4)
  for (const auto& file : a.files) {
    auto bytes = env.files.readFile(file, core::kMaxSnapshotFileBytes);
    if (!bytes.ok()) {
      env.out << file << ": FAILED unreadable: " << bytes.error().message << "\n";
      ++unreadable;
      continue;
    }
    auto envelope = core::decodeSnapshotFile(*bytes);
    if (!envelope.ok()) {
      env.out << file << ": FAILED malformed: " << envelope.error().message << "\n";
      ++failed;
      continue;
    }
    const auto check = verifier->verify(*envelope, env.clock.now());
    if (!check.ok()) {
      env.out << file << ": FAILED " << core::signatureProblemName(check.problem) << ": "
              << check.message << "\n";
      ++failed;
      continue;
    }
    // The signature is good; the snapshot must also describe the signer's own node.
    auto inner = core::openSnapshot(*envelope);
    if (!inner.ok()) {
      env.out << file << ": FAILED malformed: " << inner.error().message << "\n";
      ++failed;
      continue;
    }
    if (auto st = core::checkSignerNode(core::snapshotNodeName(inner->node()), check.signer);
        !st.ok()) {
      env.out << file << ": FAILED node_mismatch: " << st.error().message << "\n";
      ++failed;
      continue;
    }
    env.out << file << ": OK signed by " << check.signer.subject << " ("
            << core::certificateRoleName(check.signer.role)
            << (check.signer.tenant.empty() ? "" : ", tenant " + check.signer.tenant)
            << "), snapshot " << core::snapshotId(*envelope) << "\n";
  }
  return failed > 0       ? core::kExitVerifyFailed
         : unreadable > 0 ? core::kExitCollectFailed
                          : core::kExitOk;
}

}  // namespace

void addTransportOptions(CLI::App* cmd, TransportArgs& a, bool download) {
  if (download) {
    cmd->add_option("--collector", a.flags.collector,
                    "Collector HOST:PORT (reached with your support certificate)");
    cmd->add_option("--ca", a.flags.ca, "CA certificate (PEM) the collector and signers chain to");
    cmd->add_option("--cert", a.flags.cert,
                    "Your support certificate (PEM, issued for support): authenticates you to "
                    "the collector");
    cmd->add_option("--key", a.flags.key, "The support certificate's private key (PEM)");
    cmd->add_option("--config", a.config,
                    "Config file with the same keys (default " + std::string(kDefaultAgentConfig) +
                        " when it exists)");
    return;
  }
  cmd->add_option("--collector", a.flags.collector, "Collector HOST:PORT (uploads when set)");
  cmd->add_option("--ca", a.flags.ca, "CA certificate (PEM) the collector and signers chain to");
  cmd->add_option("--cert", a.flags.cert, "This node's certificate (PEM): signs and authenticates");
  cmd->add_option("--key", a.flags.key, "This node's private key (PEM)");
  cmd->add_option("--spool", a.flags.spool,
                  "Spool directory for what could not be delivered (default " +
                      std::string(kDefaultSpoolDir) +
                      " for root, ~/.local/state/ibcollect/spool for other users)");
  cmd->add_option("--spool-limit-mb", a.spool_limit_mb, "Most the spool may hold, MiB")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--retries", a.retries, "Tries after the first before spooling (default 3)")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--config", a.config,
                  "Agent config with the same keys (default " + std::string(kDefaultAgentConfig) +
                      " when it exists)");
}

core::Result<TransportSettings> transportSettings(CliEnvironment& env, const TransportArgs& a) {
  TransportSettings base;
  const std::string path = a.config.empty() ? std::string(kDefaultAgentConfig) : a.config;
  if (!a.config.empty() || env.files.exists(path)) {
    auto text = env.files.readFile(path, 1u << 20);
    if (!text.ok()) return core::Error{text.error().code, "agent config: " + text.error().message};
    auto parsed = parseAgentConfig(*text, path);
    if (!parsed.ok()) return parsed.error();
    base = std::move(*parsed);
  }
  TransportSettings flags = a.flags;
  if (a.retries >= 0) flags.retries = a.retries;
  if (a.spool_limit_mb > 0) flags.spool_limit_mb = a.spool_limit_mb;
  TransportSettings merged = mergeSettings(std::move(base), flags);
  if (merged.spool.empty()) {
    merged.spool =
        defaultSpoolDir(::geteuid() == 0, env.env.get("XDG_STATE_HOME"), env.env.get("HOME"));
  }
  return merged;
}

core::Result<SnapshotTransport> snapshotTransport(CliEnvironment& env, const TransportArgs& a) {
  auto settings = transportSettings(env, a);
  if (!settings.ok()) return settings.error();
  SnapshotTransport t;
  if (!settings->cert.empty() || !settings->key.empty()) {
    if (settings->cert.empty() || settings->key.empty()) {
      return core::Error{core::ErrorCode::InvalidArgument, "signing needs both --cert and --key"};
    }
    auto cert = readPem(env, settings->cert);
    if (!cert.ok()) return cert.error();
    auto key = readPem(env, settings->key);
    if (!key.ok()) return key.error();
    auto signer = core::SnapshotSigner::fromPem(*cert, *key);
    if (!signer.ok()) {
      return core::Error{signer.error().code,
                         settings->cert + " / " + settings->key + ": " + signer.error().message};
    }
    t.signer = std::move(*signer);
  }
  if (!settings->collector.empty()) {
    auto config = loadDeliveryConfig(*settings, env.files);
    if (!config.ok()) return config.error();
    if (auto st = checkLocalCredentials(config->credentials, CredentialUse::Upload, settings->cert,
                                        settings->key);
        !st.ok()) {
      return st.error();
    }
    t.delivery = std::move(*config);
  }
  return t;
}

core::Result<v1::SignedSnapshot> envelopeFor(const SnapshotTransport& t,
                                             const v1::Snapshot& snapshot) {
  if (!t.signer) return core::wrapUnsigned(snapshot);
  // The collector's rule (docs/security.md), checked before signing: only a node's own certificate
  // signs its snapshot; a signature the collector would refuse is never made.
  if (auto st =
          core::checkSignerNode(core::snapshotNodeName(snapshot.node()), t.signer->identity());
      !st.ok()) {
    return core::Error{st.error().code,
                       "not signing: " + st.error().message +
                           " (the collector refuses it); use the certificate issued for this "
                           "node, or none to keep the snapshot unsigned"};
  }
  return t.signer->sign(snapshot);
}

bool deliverCollected(CliEnvironment& env, const SnapshotTransport& t,
                      const v1::SignedSnapshot& envelope, const std::string& kept_in) {
  if (!t.delivery) return true;
  const auto& config = *t.delivery;
  TlsCollectorConnector connector(config.collector, config.credentials, config.timeouts);
  Spool spool(config.spool_dir, config.spool_limits, env.files, env.writer);
  auto delivery = makeDelivery(env, connector, spool, config);
  return report(env, "the snapshot", connector.describe(), delivery.deliver(envelope), kept_in);
}

std::size_t deliverCollectedAll(CliEnvironment& env, const SnapshotTransport& t,
                                const std::vector<CollectedUpload>& uploads, BatchReport how) {
  if (!t.delivery || uploads.empty()) return 0;
  const auto& config = *t.delivery;
  TlsCollectorConnector connector(config.collector, config.credentials, config.timeouts);
  Spool spool(config.spool_dir, config.spool_limits, env.files, env.writer);
  auto delivery = makeDelivery(env, connector, spool, config);
  return deliverAndReport(env, delivery, connector.describe(), uploads, how);
}

void addTransportCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  auto ua = std::make_shared<UploadArgs>();
  CLI::App* up = app.add_subcommand("upload", "Send signed snapshots to the collector");
  up->add_option("files", ua->files, "Signed snapshots (FILE.ibsnap)")
      ->required()
      ->check(CLI::ExistingFile);
  addTransportOptions(up, ua->transport);
  up->footer(
      helpFooter({"ibcollect upload node.ibsnap --collector c:7443 --ca ca.pem \\",
                  "    --cert node01.pem --key node01.key",
                  "ibcollect upload run/*.ibsnap     (settings from /etc/ibcollect/agent.conf)"},
                 kDeliveryExitCodes));

  auto fa = std::make_shared<TransportArgs>();
  CLI::App* fl = app.add_subcommand("flush", "Send the snapshots kept in the offline spool");
  addTransportOptions(fl, *fa);
  fl->footer(
      helpFooter({"ibcollect flush                  (settings from /etc/ibcollect/agent.conf)",
                  "ibcollect flush --spool ~/.local/state/ibcollect/spool --collector "
                  "c:7443 ..."},
                 kDeliveryExitCodes));

  auto va = std::make_shared<VerifyArgs>();
  CLI::App* ve = app.add_subcommand("verify", "Check snapshot signatures offline against a CA");
  ve->add_option("files", va->files, "Snapshots (FILE.ibsnap)")
      ->required()
      ->check(CLI::ExistingFile);
  ve->add_option("--ca", va->transport.flags.ca, "CA certificate (PEM)");
  ve->add_option("--config", va->transport.config, "Agent config (for its ca = ... key)");
  ve->footer(std::string("Example:\n  ibcollect verify --ca ca.pem run/*.ibsnap\n\n") +
             "Exit codes: 0 every signature verifies, 3 usage error, 4 a file could not be\n"
             "read, 5 a signature, certificate or snapshot did not verify (each failing file\n"
             "is named).");

  commands.push_back({[up] { return up->parsed(); }, [&env, ua] { return runUpload(env, *ua); }});
  commands.push_back({[fl] { return fl->parsed(); }, [&env, fa] { return runFlush(env, *fa); }});
  commands.push_back({[ve] { return ve->parsed(); }, [&env, va] { return runVerify(env, *va); }});
}

}  // namespace ibc::agent::cli
