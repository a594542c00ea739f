#include "ibc/collector/app.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>

#include "ibc/collector/net/server.h"
#include "ibc/collector/service/service.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/config_file.h"
#include "ibc/core/findings.h"
#include "ibc/core/signing.h"

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
};

std::chrono::milliseconds seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

core::Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error{core::ErrorCode::NotFound, path + ": cannot be read"};
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "host:port", "[v6]:port".
bool splitListen(const std::string& listen, std::string& host, uint16_t& port) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) return false;
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  try {
    const unsigned long p = std::stoul(listen.substr(colon + 1));
    if (p > 65535) return false;
    port = static_cast<uint16_t>(p);
  } catch (const std::exception&) {
    return false;
  }
  return !host.empty();
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

int runCollector(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Args a;
  CLI::App app{"ibcollect-collector: receives signed snapshots over mutual TLS and stores them",
               "ibcollect-collector"};
  // Answers before any other check, so `--version` works without --listen, --data, ...
  app.set_version_flag("--version", std::string("ibcollect-collector ") + IBC_VERSION);
  std::string config_path;
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
  app.add_option("--max-handshakes-per-source", a.server.max_handshakes_per_source,
                 "TLS handshakes one source address may run at once")
      ->capture_default_str();
  app.add_option("--reserved-handshakes", a.server.reserved_handshakes,
                 "Handshake slots kept for sources that completed a handshake recently")
      ->capture_default_str();
  app.add_option("--max-unauthenticated-per-source", a.server.max_unauthenticated_per_source,
                 "Connections one source address may hold before authenticating")
      ->capture_default_str();
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
  app.add_option("--min-free-mb", a.min_free_mb,
                 "Refuse uploads (retryable) while the --data filesystem has less free, MiB; "
                 "writing resumes by itself when space returns (0: no floor)")
      ->capture_default_str();
  app.add_option("--drain-timeout", a.drain_timeout,
                 "Seconds SIGTERM waits for requests in progress")
      ->capture_default_str();
  app.add_option("--worker-threads", a.server.worker_threads,
                 "Threads verifying signatures and answering queries")
      ->capture_default_str();
  app.footer(
      "Exit codes: 0 stopped cleanly (SIGTERM), 3 usage error, 4 could not start.\n"
      "Counters (accepted, stored, rejections by reason) are logged on SIGTERM and\n"
      "answered to support certificates (stats request).");

  // The config file's keys become flags after the command line's own (which win), so the
  // same checks apply to both; a mistake in the file is reported with its FILE:LINE.
  std::vector<std::string> all_args = args;
  std::map<std::string, std::pair<std::string, int>> from_file;  // "--key" -> file, line
  if (auto path = configPath(args)) {
    auto text = readFile(*path);
    if (!text.ok()) {
      err << "ibcollect-collector: --config " << text.error().message << "\n";
      return core::kExitUsage;
    }
    std::vector<std::string> keys;
    for (const CLI::Option* opt : app.get_options()) {
      for (const auto& name : opt->get_lnames()) {
        if (name != "config" && name != "help" && name != "version") keys.push_back(name);
      }
    }
    auto entries = core::parseConfigFile(*text, *path, keys);
    if (!entries.ok()) {
      err << "ibcollect-collector: " << entries.error().message << "\n";
      return core::kExitUsage;
    }
    for (const auto& e : *entries) {
      const std::string flag = "--" + e.key;
      const bool on_command_line = std::any_of(args.begin(), args.end(), [&](const std::string& x) {
        return x == flag || x.rfind(flag + "=", 0) == 0;
      });
      if (on_command_line) continue;
      all_args.push_back(flag);
      all_args.push_back(e.value);
      from_file[flag] = {*path, e.line};
    }
  }
  std::vector<const char*> argv{"ibcollect-collector"};
  for (const auto& s : all_args) argv.push_back(s.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    for (const auto& [flag, where] : from_file) {
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
  if (!splitListen(a.listen, a.server.listen_host, a.server.listen_port)) {
    err << "ibcollect-collector: --listen wants ADDR:PORT, got '" << a.listen << "'\n";
    return core::kExitUsage;
  }
  for (double t :
       {a.handshake_timeout, a.idle_timeout, a.read_timeout, a.write_timeout, a.admission_timeout,
        a.drain_timeout, a.first_byte_timeout, a.handshake_stall_timeout}) {
    if (!(t > 0)) {
      err << "ibcollect-collector: timeouts must be positive seconds\n";
      return core::kExitUsage;
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

  const auto fail = [&err](const std::string& what) {
    err << "ibcollect-collector: " << what << "\n";
    return core::kExitCollectFailed;
  };
  for (auto [path, pem] :
       {std::pair{&a.ca, &a.server.ca_pem}, std::pair{&a.cert, &a.server.certificate_pem},
        std::pair{&a.key, &a.server.key_pem}}) {
    auto content = readFile(*path);
    if (!content.ok()) return fail(content.error().message);
    *pem = std::move(*content);
  }
  auto verifier = core::SignatureVerifier::fromPem(a.server.ca_pem);
  if (!verifier.ok()) return fail(a.ca + ": " + verifier.error().message);
  StoreOptions store_options;
  store_options.min_free_bytes = a.min_free_mb << 20;
  auto store = Store::open(a.data, store_options);
  if (!store.ok()) return fail(store.error().message);

  StreamEventLog log(err);
  Service service(**store, **verifier, log, [] { return std::chrono::system_clock::now(); });
  auto server = Server::create(a.server, service, log);
  if (!server.ok()) return fail(server.error().message);
  out << "listening on " << (*server)->localAddress() << std::endl;
  log.write("collector started: listening on " + (*server)->localAddress() + ", data " + a.data);
  (*server)->run();
  service.drain();
  log.write("collector stopped: " + service.statsLine());
  return core::kExitOk;
}

}  // namespace ibc::collector
