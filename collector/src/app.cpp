#include "ibc/collector/app.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "ibc/collector/net/admin_socket.h"
#include "ibc/collector/net/metrics_server.h"
#include "ibc/collector/net/server.h"
#include "ibc/collector/service/retention_loop.h"
#include "ibc/collector/service/service.h"
#include "ibc/collector/store/maintenance.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/config_file.h"
#include "ibc/core/findings.h"
#include "ibc/core/signing.h"
#include "ibc/core/text.h"
#include "ibc/os/os.h"

namespace ibc::collector {

namespace {

struct Args {
  std::string listen;
  std::string data;
  std::string ca;
  std::string cert;
  std::string key;
  ServerOptions server;
  double handshake_timeout = 10;
  double idle_timeout = 60;
  double read_timeout = 30;
  double write_timeout = 30;
  double admission_timeout = 10;
  double drain_timeout = 30;
  std::size_t max_inflight_mb = 256;
  std::size_t max_inflight_per_tenant_mb = 64;
  double first_byte_timeout = 3;
  double handshake_stall_timeout = 2;
  uint64_t min_free_mb = 256;
  std::string metrics;
  bool metrics_client_cert = false;
  double retain_days = 0;
  double max_store_gb = 0;
};

// CLI11's formatter with descriptions wrapped at word boundaries so `--help` fits 80
// columns (as the agent's; CLI11 indents lines after a '\n' under the description column).
class WrappingFormatter : public CLI::Formatter {
 public:
  static constexpr std::size_t kHelpWidth = 80;
  std::string make_option_desc(const CLI::Option* opt) const override {
    return core::wrapWords(CLI::Formatter::make_option_desc(opt), kHelpWidth - get_column_width());
  }
};

constexpr std::chrono::hours kRetentionInterval{1};
constexpr const char* kAdminSocketName = "admin.sock";

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

// The config file and the PEM files an operator names (bounded: none is near a MiB).
core::Result<std::string> readFile(const std::string& path) {
  constexpr std::size_t kMaxOperatorFileBytes = 1u << 20;
  auto bytes = os::RootedFilesystem("").readFile(path, kMaxOperatorFileBytes);
  if (!bytes.ok() && bytes.error().code == core::ErrorCode::TooLarge) {
    return core::Error{core::ErrorCode::TooLarge, path + ": larger than 1 MiB"};
  }
  return bytes;
}

// The FILE of `--config FILE` / `--config=FILE`, read before parsing (its keys become flags).
std::optional<std::string> configPath(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) return args[i].substr(9);
  }
  return std::nullopt;
}

}  // namespace

namespace {

// `ibcollect-collector backup --data DIR DEST`.
int runBackup(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string data;
  std::string dest;
  CLI::App app{"ibcollect-collector backup: a consistent copy of the store (RocksDB checkpoint)",
               "ibcollect-collector backup"};
  app.formatter(std::make_shared<WrappingFormatter>());
  app.add_option("--data", data, "The collector's --data directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("DEST", dest, "New directory for the backup (must not exist)")->required();
  app.footer(
      "When a collector runs on DIR, it takes the checkpoint itself (RocksDB lets\n"
      "one process open a store), asked through DIR/admin.sock (mode 0600: run as\n"
      "the collector's user or root); ingest goes on meanwhile and the backup holds\n"
      "every snapshot acknowledged before it started. When none runs, backup opens\n"
      "the store itself. DEST is written by the collector's user: it must be\n"
      "writable to it (with the packaged unit, under /var/lib/ibcollect). Files are\n"
      "hard links when DEST is on the store's filesystem, copies otherwise.\n"
      "Restore: stop the collector, then start it with --data DEST (or move DEST\n"
      "into place of DIR).\n"
      "Exit codes: 0 done, 3 usage error, 4 failed.");
  std::vector<const char*> argv{"backup"};
  for (const auto& s : args) argv.push_back(s.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e, out, err);
    return rc == 0 ? core::kExitOk : core::kExitUsage;
  }
  std::error_code ec;
  const std::string target = std::filesystem::absolute(dest, ec).lexically_normal().string();
  if (ec || std::filesystem::exists(target, ec)) {
    err << "ibcollect-collector backup: " << dest << " already exists: name a new directory\n";
    return core::kExitUsage;
  }
  const std::string socket = (std::filesystem::path(data) / kAdminSocketName).string();
  auto answer = adminRequest(socket, "checkpoint " + target, std::chrono::hours(1));
  if (answer.ok()) {
    if (answer->rfind("ok ", 0) != 0) {
      err << "ibcollect-collector backup: the collector answered: " << *answer << "\n";
      return core::kExitCollectFailed;
    }
    out << "backup of " << data << " in " << target
        << " by the running collector: " << answer->substr(3) << std::endl;
    return core::kExitOk;
  }
  if (answer.error().code != core::ErrorCode::NotFound) {
    err << "ibcollect-collector backup: " << answer.error().message << "\n";
    return core::kExitCollectFailed;
  }
  // No collector runs here: open the store ourselves (RocksDB's lock refuses if one does).
  if (!std::filesystem::exists(std::filesystem::path(data) / "CURRENT", ec)) {
    err << "ibcollect-collector backup: " << data << " holds no store\n";
    return core::kExitCollectFailed;
  }
  StoreOptions options;
  options.min_free_bytes = 0;
  auto store = Store::open(data, options);
  if (!store.ok()) {
    err << "ibcollect-collector backup: " << store.error().message << "\n";
    return core::kExitCollectFailed;
  }
  auto made = createCheckpoint(**store, target);
  if (!made.ok()) {
    err << "ibcollect-collector backup: " << made.error().message << "\n";
    return core::kExitCollectFailed;
  }
  out << "backup of " << data << " in " << target
      << " (no collector running): bytes=" << made->bytes << " ms=" << made->took.count()
      << std::endl;
  return core::kExitOk;
}

}  // namespace

namespace {

// --config, who this collector is and where it keeps its data.
void declareIdentityOptions(CLI::App& app, Args& a, std::string& config_path) {
  app.add_option("--config", config_path,
                 "Read options from FILE: `key = value` lines with the long flags' names "
                 "(flags on the command line win)");
  app.add_option("--listen", a.listen, "ADDR:PORT to listen on (port 0: any free port)")
      ->required();
  app.add_option("--data", a.data, "Directory of the RocksDB store (created if missing)")
      ->required();
  app.add_option("--ca", a.ca, "CA certificates (PEM) that clients and signers chain to")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--cert", a.cert, "This collector's certificate (PEM)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--key", a.key, "This collector's private key (PEM)")
      ->required()
      ->check(CLI::ExistingFile);
}

// How much the server admits at once (connections, handshakes, memory).
void declareLimitOptions(CLI::App& app, Args& a) {
  app.add_option("--max-connections", a.server.max_connections, "Connections open at once")
      ->capture_default_str();
  app.add_option("--max-handshakes", a.server.max_handshakes, "TLS handshakes running at once")
      ->capture_default_str();
  app.add_option("--max-frame-bytes", a.server.max_frame_bytes, "Largest request frame")
      ->capture_default_str();
  app.add_option("--max-inflight-mb", a.max_inflight_mb,
                 "Request payload held in memory at once, MiB (beyond: backpressure)")
      ->capture_default_str();
  app.add_option("--max-inflight-per-tenant-mb", a.max_inflight_per_tenant_mb,
                 "Request payload one tenant may hold in memory at once, MiB")
      ->capture_default_str();
  app.add_option("--max-pipelined-requests", a.server.max_pipelined_requests,
                 "Requests one connection may have read and not yet answered (answered in order)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-handshakes-per-source", a.server.max_handshakes_per_source,
                 "TLS handshakes one source address may run at once")
      ->capture_default_str();
  app.add_option("--reserved-handshakes", a.server.reserved_handshakes,
                 "Handshake slots kept for sources that completed a handshake recently")
      ->capture_default_str();
  app.add_option("--max-unauthenticated-per-source", a.server.max_unauthenticated_per_source,
                 "Connections one source address may hold before authenticating; more from it "
                 "wait their turn")
      ->capture_default_str();
  app.add_option("--max-waiting-connections", a.server.max_waiting_connections,
                 "Connections waiting for their source's turn, in all (beyond: refused)")
      ->capture_default_str();
}

void declareTimeoutOptions(CLI::App& app, Args& a) {
  app.add_option("--first-byte-timeout", a.first_byte_timeout,
                 "Seconds a new connection may stay silent")
      ->capture_default_str();
  app.add_option("--handshake-stall-timeout", a.handshake_stall_timeout,
                 "Seconds a handshake may take once its ClientHello is in")
      ->capture_default_str();
  app.add_option("--handshake-timeout", a.handshake_timeout,
                 "Seconds from connect to the whole ClientHello")
      ->capture_default_str();
  app.add_option("--idle-timeout", a.idle_timeout, "Seconds a connection may wait between frames")
      ->capture_default_str();
  app.add_option("--read-timeout", a.read_timeout,
                 "Seconds for a whole frame to arrive after its first byte")
      ->capture_default_str();
  app.add_option("--write-timeout", a.write_timeout, "Seconds for a client to take an answer")
      ->capture_default_str();
  app.add_option("--admission-timeout", a.admission_timeout,
                 "Seconds a frame may wait for memory before it is answered OVERLOADED")
      ->capture_default_str();
}

// Disk floor, metrics, retention, shutdown and threads; then the footer.
void declareOperationsOptions(CLI::App& app, Args& a) {
  app.add_option("--min-free-mb", a.min_free_mb,
                 "Refuse uploads (retryable) while the --data filesystem has less free, MiB; "
                 "writing resumes by itself when space returns (0: no floor)")
      ->capture_default_str();
  app.add_option("--metrics", a.metrics,
                 "Serve Prometheus metrics (GET /metrics) on ADDR:PORT: plain HTTP on a "
                 "loopback address, HTTPS with the collector's certificate on any other "
                 "(port 0: any free port; off when not given)")
      ->type_name("ADDR:PORT");
  app.add_flag("--metrics-client-cert", a.metrics_client_cert,
               "With --metrics on a non-loopback address: scrapers must present a certificate "
               "from --ca (Prometheus tls_config cert_file/key_file)");
  app.add_option("--retain-days", a.retain_days,
                 "Delete snapshots received more than N days ago, hourly and at start; "
                 "snapshots of open cases are kept (0: keep forever)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-store-gb", a.max_store_gb,
                 "Delete the oldest snapshots while the store is larger than X GiB "
                 "(0: no limit)")
      ->type_name("X")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--drain-timeout", a.drain_timeout,
                 "Seconds SIGTERM waits for requests in progress")
      ->capture_default_str();
  app.add_option("--worker-threads", a.server.worker_threads,
                 "Threads verifying signatures and answering queries")
      ->capture_default_str();
  app.footer(
      "Backup: ibcollect-collector backup --data DIR DEST (see backup --help).\n"
      "Restore: stop the collector, start it with --data DEST.\n"
      "Events go to stderr, one line each: ts=... level=... event=... key=value.\n"
      "Exit codes: 0 stopped cleanly (SIGTERM), 3 usage error, 4 could not start.\n"
      "Counters (accepted, stored, rejections by reason) are logged on SIGTERM and\n"
      "answered to support certificates (stats request) and on --metrics.");
}

// The command line plus the config file's keys as flags, and where each of those came from.
struct MergedArgs {
  std::vector<std::string> args;
  std::map<std::string, std::pair<std::string, int>> from_file;  // "--key" -> file, line
};

// The config file's keys become flags after the command line's own (which win), so the
// same checks apply to both; a mistake in the file is reported with its FILE:LINE.
core::Result<MergedArgs> mergeConfigFile(const CLI::App& app,
                                         const std::vector<std::string>& args) {
  MergedArgs merged{args, {}};
  const auto path = configPath(args);
  if (!path) return merged;
  auto text = readFile(*path);
  if (!text.ok()) return core::Error{text.error().code, "--config " + text.error().message};
  std::vector<std::string> keys;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) {
      if (name != "config" && name != "help" && name != "version") keys.push_back(name);
    }
  }
  auto entries = core::parseConfigFile(*text, *path, keys);
  if (!entries.ok()) return entries.error();
  for (const auto& e : *entries) {
    const std::string flag = "--" + e.key;
    const bool on_command_line = std::any_of(args.begin(), args.end(), [&](const std::string& x) {
      return x == flag || x.rfind(flag + "=", 0) == 0;
    });
    if (on_command_line) continue;
    // One `--key=value` word: a flag takes true/false that way (`--key false` would leave
    // `false` as an argument nobody expects).
    merged.args.push_back(flag + "=" + e.value);
    merged.from_file[flag] = {*path, e.line};
  }
  return merged;
}

// Parses the merged arguments. An exit code when the program ends here (--help, --version,
// a usage error, named with its FILE:LINE when the config file made it).
std::optional<int> parseArgs(CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                             std::ostream& err) {
  auto merged = mergeConfigFile(app, args);
  if (!merged.ok()) {
    err << "ibcollect-collector: " << merged.error().message << "\n";
    return core::kExitUsage;
  }
  std::vector<const char*> argv{"ibcollect-collector"};
  for (const auto& s : merged->args) argv.push_back(s.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    for (const auto& [flag, where] : merged->from_file) {
      const auto at = what.find(flag);
      if (at == std::string::npos) continue;
      const char after = at + flag.size() < what.size() ? what[at + flag.size()] : ' ';
      if (std::isalnum(static_cast<unsigned char>(after)) || after == '-') continue;
      err << "ibcollect-collector: " << where.first << ":" << where.second << ": " << flag.substr(2)
          << ": " << what << "\n";
      return core::kExitUsage;
    }
    const int rc = app.exit(e, out, err);
    return rc == 0 ? core::kExitOk : core::kExitUsage;
  }
  return std::nullopt;
}

// Checks what the parser cannot (ADDR:PORT, positive timeouts) and fills a.server.
bool finishServerOptions(Args& a, std::ostream& err) {
  if (!splitHostPort(a.listen, a.server.listen_host, a.server.listen_port)) {
    err << "ibcollect-collector: --listen wants ADDR:PORT, got '" << a.listen << "'\n";
    return false;
  }
  for (double t :
       {a.handshake_timeout, a.idle_timeout, a.read_timeout, a.write_timeout, a.admission_timeout,
        a.drain_timeout, a.first_byte_timeout, a.handshake_stall_timeout}) {
    if (!(t > 0)) {
      err << "ibcollect-collector: timeouts must be positive seconds\n";
      return false;
    }
  }
  a.server.handshake_timeout = seconds(a.handshake_timeout);
  a.server.idle_timeout = seconds(a.idle_timeout);
  a.server.read_timeout = seconds(a.read_timeout);
  a.server.write_timeout = seconds(a.write_timeout);
  a.server.admission_timeout = seconds(a.admission_timeout);
  a.server.drain_timeout = seconds(a.drain_timeout);
  a.server.max_inflight_bytes = a.max_inflight_mb << 20;
  a.server.max_inflight_per_tenant_bytes = a.max_inflight_per_tenant_mb << 20;
  a.server.first_byte_timeout = seconds(a.first_byte_timeout);
  a.server.handshake_stall_timeout = seconds(a.handshake_stall_timeout);
  return true;
}

// Reads --ca, --cert and --key into a.server; the verifier of snapshot signatures.
core::Result<std::unique_ptr<core::SignatureVerifier>> loadCredentials(Args& a) {
  for (auto [path, pem] :
       {std::pair{&a.ca, &a.server.ca_pem}, std::pair{&a.cert, &a.server.certificate_pem},
        std::pair{&a.key, &a.server.key_pem}}) {
    auto content = readFile(*path);
    if (!content.ok()) return content.error();
    *pem = std::move(*content);
  }
  auto verifier = core::SignatureVerifier::fromPem(a.server.ca_pem);
  if (!verifier.ok())
    return core::Error{verifier.error().code, a.ca + ": " + verifier.error().message};
  return std::move(*verifier);
}

std::unique_ptr<RetentionLoop> startRetention(const Args& a, Store& store, EventLog& log) {
  if (!(a.retain_days > 0 || a.max_store_gb > 0)) return nullptr;
  RetentionPolicy policy;
  policy.max_age = std::chrono::milliseconds(static_cast<int64_t>(a.retain_days * 86400e3));
  policy.max_store_bytes = static_cast<uint64_t>(a.max_store_gb * double(1ull << 30));
  return std::make_unique<RetentionLoop>(store, policy, kRetentionInterval, log,
                                         [] { return std::chrono::system_clock::now(); });
}

// Backups are taken by this process, which holds the store (RocksDB allows one): `backup`
// asks through DATA/admin.sock. Without the socket the collector still runs.
core::Result<std::unique_ptr<AdminSocket>> startAdminSocket(const std::string& data, Store& store,
                                                            EventLog& log) {
  const std::string admin_path = (std::filesystem::path(data) / kAdminSocketName).string();
  auto admin = AdminSocket::start(
      admin_path,
      [&store, &log](const std::string& request) -> std::string {
        if (request.rfind("checkpoint /", 0) != 0) return "error unknown request";
        const std::string dest = request.substr(11);
        auto made = createCheckpoint(store, dest);
        if (!made.ok()) {
          log.event(LogLevel::Error, "backup_failed",
                    {{"dest", dest}, {"detail", made.error().message}});
          return "error " + made.error().message;
        }
        log.event(LogLevel::Info, "backup_done",
                  {{"dest", dest},
                   {"bytes", std::to_string(made->bytes)},
                   {"ms", std::to_string(made->took.count())}});
        return "ok bytes=" + std::to_string(made->bytes) +
               " ms=" + std::to_string(made->took.count());
      },
      log);
  if (!admin.ok()) {
    log.event(LogLevel::Warn, "admin_socket_unavailable",
              {{"detail", admin.error().message},
               {"consequence", "backup needs this collector stopped"}});
  }
  return admin;
}

void logStarted(EventLog& log, std::ostream& out, const Server& server,
                const MetricsServer* metrics, const std::string& data) {
  out << "listening on " << server.localAddress() << std::endl;
  if (metrics) out << "metrics on " << metrics->localAddress() << std::endl;
  LogFields started_fields{{"listen", server.localAddress()}, {"data", data}};
  if (metrics) {
    started_fields.push_back(
        {"metrics", metrics->scheme() + "://" + metrics->localAddress() + "/metrics"});
  }
  started_fields.push_back({"version", IBC_VERSION});
  log.event(LogLevel::Info, "collector_started", started_fields);
}

void logStopped(EventLog& log, const Service& service) {
  const auto s = service.stats();
  LogFields stopped{{"connections", std::to_string(s.connections_accepted())},
                    {"requests", std::to_string(s.requests())},
                    {"stored", std::to_string(s.uploads_stored())},
                    {"duplicate", std::to_string(s.uploads_duplicate())},
                    {"bytes", std::to_string(s.bytes_stored())},
                    {"write_batches", std::to_string(s.write_batches())}};
  std::string rejected;
  for (const auto& r : s.rejections()) {
    rejected += (rejected.empty() ? "" : " ") + r.name() + "=" + std::to_string(r.count());
  }
  stopped.push_back({"rejected", rejected.empty() ? "none" : rejected});
  log.event(LogLevel::Info, "collector_stopped", stopped);
}

// Opens the store, starts the service, server, retention, metrics and admin socket, serves
// until SIGTERM, then drains and logs the final counters.
int serve(Args& a, std::ostream& out, std::ostream& err) {
  const auto fail = [&err](const std::string& what) {
    err << "ibcollect-collector: " << what << "\n";
    return core::kExitCollectFailed;
  };
  auto verifier = loadCredentials(a);
  if (!verifier.ok()) return fail(verifier.error().message);
  MetricsServerOptions metrics_options;
  if (!a.metrics.empty() && !splitHostPort(a.metrics, metrics_options.host, metrics_options.port)) {
    err << "ibcollect-collector: --metrics wants ADDR:PORT, got '" << a.metrics << "'\n";
    return core::kExitUsage;
  }
  if (!a.metrics.empty() && !isLoopbackHost(metrics_options.host)) {
    metrics_options.tls = MetricsTls{a.server.certificate_pem, a.server.key_pem, a.server.ca_pem,
                                     a.metrics_client_cert};
  }
  const auto started_at = std::chrono::system_clock::now();
  StreamEventLog log(err);
  StoreOptions store_options;
  store_options.min_free_bytes = a.min_free_mb << 20;
  store_options.log = &log;
  auto store = Store::open(a.data, store_options);
  if (!store.ok()) return fail(store.error().message);
  for (const auto& left : removePartialBackups(**store)) {
    log.event(LogLevel::Info, "partial_backup_removed",
              {{"path", left}, {"why", "a backup was stopped before it finished"}});
  }

  Service service(**store, **verifier, log, [] { return std::chrono::system_clock::now(); });
  auto server = Server::create(a.server, service, log);
  if (!server.ok()) return fail(server.error().message);

  // Before the metrics server, whose thread reads `retention`.
  std::unique_ptr<RetentionLoop> retention = startRetention(a, **store, log);
  const auto render = [&]() {
    auto m = service.metrics();
    if (auto size = storeSize(**store); size.ok()) m.store_size = *size;
    if (retention) m.retention_deleted = retention->deleted();
    m.process_start_time_seconds =
        std::chrono::duration<double>(started_at.time_since_epoch()).count();
    return prometheusText(m);
  };
  std::unique_ptr<MetricsServer> metrics;
  if (!a.metrics.empty()) {
    auto started = MetricsServer::start(metrics_options, render, log);
    if (!started.ok()) return fail(started.error().message);
    metrics = std::move(*started);
  }
  auto admin = startAdminSocket(a.data, **store, log);

  logStarted(log, out, **server, metrics.get(), a.data);
  (*server)->run();
  service.drain();
  metrics.reset();
  retention.reset();
  logStopped(log, service);
  return core::kExitOk;
}

}  // namespace

int runCollector(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && args.front() == "backup") {
    return runBackup(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  }
  Args a;
  CLI::App app{"ibcollect-collector: receives signed snapshots over mutual TLS and stores them",
               "ibcollect-collector"};
  app.formatter(std::make_shared<WrappingFormatter>());
  // Answers before any other check, so `--version` works without --listen, --data, ...
  app.set_version_flag("--version", std::string("ibcollect-collector ") + IBC_VERSION);
  std::string config_path;
  declareIdentityOptions(app, a, config_path);
  declareLimitOptions(app, a);
  declareTimeoutOptions(app, a);
  declareOperationsOptions(app, a);
  if (auto exit_code = parseArgs(app, args, out, err)) return *exit_code;
  if (!finishServerOptions(a, err)) return core::kExitUsage;
  return serve(a, out, err);
}

}  // namespace ibc::collector
