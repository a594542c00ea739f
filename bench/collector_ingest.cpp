// collector_ingest_bench: N concurrent agents upload signed 64 KiB snapshots to a real
// `ibcollect-collector`, each upload over a fresh mutual-TLS connection; prints
// snapshots/s and ack latency next to this machine's limits measured in the same run:
// `openssl speed ed25519`, Ed25519 verifications of a 64 KiB snapshot per second, TLS
// handshakes per second against the same collector, and synced RocksDB writes per second
// (one sync per snapshot, and group commits of 64).
//
//   collector_ingest_bench --collector BIN --make-pki SCRIPT [--agents 100,500,1000]
//                          [--rounds 3] [--client-threads 2] [--collector-arg ARG]...
//
// On demand, never in CI (bench/README.md). Figures, no assertions.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <asio/ssl.hpp>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector_process.h"
#include "ibc/agent/upload.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/frame.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace v1 = ::ibcollect::v1;
using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;
using asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// Agents spread over this many loopback source addresses (127.0.1.x), as nodes are, except
// in the NAT phase, where they all come from 127.0.0.1.
constexpr int kSourceAddresses = 200;
constexpr std::size_t kSnapshotBytes = 64 * 1024;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double secondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  return v[i];
}

// ---- the collector process -------------------------------------------------------------------

using ibc::bench::startCollector;
using ibc::bench::stopCollector;

// ---- agents ----------------------------------------------------------------------------------

struct AgentTls {
  std::vector<std::unique_ptr<asio::ssl::context>> contexts;  // one per certificate
};

// The `agents` nodes' certificates (node0 ... node<agents-1>, each its own, as the collector
// requires of a snapshot's signer), or (support) the support engineer's.
AgentTls clientTls(const std::string& pki, bool support, int agents = 0) {
  AgentTls t;
  for (int i = 0; i < (support ? 1 : agents); ++i) {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
    const std::string base =
        support ? pki + "/support/bench" : pki + "/agents/bench/node" + std::to_string(i);
    ctx->add_certificate_authority(asio::buffer(readAll(pki + "/ca.pem")));
    ctx->use_certificate_chain(asio::buffer(readAll(base + ".pem")));
    ctx->use_private_key(asio::buffer(readAll(base + ".key")), asio::ssl::context::pem);
    ctx->set_verify_mode(asio::ssl::verify_peer);
    t.contexts.push_back(std::move(ctx));
  }
  return t;
}

struct RunStats {
  std::mutex mutex;
  std::vector<double> ack_ms;         // request written → acknowledgement read
  std::vector<double> end_to_end_ms;  // connect → acknowledgement read
  std::atomic<int> failures{0};
  std::string first_failure;
};

// One request over a fresh connection: an upload, or a support stats request (a handshake
// and the smallest round trip the collector answers without logging).
awaitable<bool> uploadOnce(asio::ssl::context& tls, tcp::endpoint endpoint,
                           const asio::ip::address& source, const std::string* frame,
                           RunStats& stats) {
  const auto started = SteadyClock::now();
  asio::ssl::stream<tcp::socket> stream(co_await asio::this_coro::executor, tls);
  asio::error_code ec;
  stream.lowest_layer().open(tcp::v4(), ec);
  if (!ec) stream.lowest_layer().bind(tcp::endpoint(source, 0), ec);
  if (!ec)
    co_await stream.lowest_layer().async_connect(endpoint, redirect_error(use_awaitable, ec));
  if (!ec) stream.lowest_layer().set_option(tcp::no_delay(true), ec);
  if (!ec)
    co_await stream.async_handshake(asio::ssl::stream_base::client,
                                    redirect_error(use_awaitable, ec));
  const auto fail = [&](const std::string& what) {
    if (stats.failures++ == 0) {
      std::lock_guard<std::mutex> lock(stats.mutex);
      stats.first_failure = what + ": " + ec.message();
    }
    return false;
  };
  if (ec) co_return fail("connect/handshake");
  const auto sent = SteadyClock::now();
  co_await asio::async_write(stream, asio::buffer(*frame), redirect_error(use_awaitable, ec));
  if (ec) co_return fail("write");
  ibc::core::FrameDecoder decoder(1u << 20);
  char buf[4096];
  std::optional<std::string> answer;
  while (!answer) {
    const std::size_t n =
        co_await stream.async_read_some(asio::buffer(buf), redirect_error(use_awaitable, ec));
    if (ec) co_return fail("read");
    if (!decoder.feed(std::string_view(buf, n)).ok()) co_return fail("frame");
    answer = decoder.next();
  }
  v1::CollectorResponse r;
  if (!r.ParseFromString(*answer) || !(r.has_ack() || r.has_stats())) {
    if (stats.failures++ == 0) {
      std::lock_guard<std::mutex> lock(stats.mutex);
      stats.first_failure = "no ack: " + r.ShortDebugString().substr(0, 200);
    }
    co_return false;
  }
  const auto done = SteadyClock::now();
  {
    std::lock_guard<std::mutex> lock(stats.mutex);
    stats.ack_ms.push_back(std::chrono::duration<double, std::milli>(done - sent).count());
    stats.end_to_end_ms.push_back(
        std::chrono::duration<double, std::milli>(done - started).count());
  }
  stream.lowest_layer().close(ec);
  co_return true;
}

// The source address of agent `a`: its own among kSourceAddresses loopback addresses, or
// 127.0.0.1 for all (`nat`: a tenant's nodes behind one address, a --job launcher).
asio::ip::address sourceOf(int a, bool nat) {
  if (nat) return asio::ip::make_address("127.0.0.1");
  return asio::ip::make_address("127.0.1." + std::to_string(1 + a % kSourceAddresses));
}

// `agents` concurrent agents, each sending `rounds` requests one after another over fresh
// connections: frames[i] for request i, or frames[0] for every request when it is the
// only one. Returns the elapsed seconds.
double drive(int agents, int rounds, int threads, AgentTls& tls, int port,
             const std::vector<std::string>& frames, RunStats& stats, bool nat = false) {
  asio::io_context io(threads);
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port));
  const auto start = SteadyClock::now();
  for (int a = 0; a < agents; ++a) {
    asio::co_spawn(
        asio::make_strand(io),
        [&, a]() -> awaitable<void> {
          for (int r = 0; r < rounds; ++r) {
            const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(agents) +
                                  static_cast<std::size_t>(a);
            const auto& ctx = tls.contexts[static_cast<std::size_t>(a) % tls.contexts.size()];
            co_await uploadOnce(*ctx, endpoint, sourceOf(a, nat),
                                &frames[frames.size() == 1 ? 0 : i], stats);
          }
        },
        asio::detached);
  }
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  return secondsSince(start);
}

// ---- machine limits --------------------------------------------------------------------------

double opensslSpeedEd25519Verify() {
  ibc::os::ProcessRunner runner;
  auto r = runner.run({"openssl", "speed", "-seconds", "2", "ed25519"}, std::chrono::seconds(60));
  if (!r.ok()) return 0;
  std::istringstream in(r->out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Ed25519") == std::string::npos || line.find("bits") == std::string::npos)
      continue;
    std::istringstream words(line);
    std::vector<std::string> w((std::istream_iterator<std::string>(words)),
                               std::istream_iterator<std::string>());
    if (w.size() >= 2) return std::atof(w.back().c_str());
  }
  return 0;
}

double verify64kPerSecond(const ibc::core::SnapshotSigner& signer, const std::string& ca_pem) {
  auto verifier = ibc::core::SignatureVerifier::fromPem(ca_pem);
  v1::Snapshot s;
  s.add_nccl_logs()->set_raw(std::string(kSnapshotBytes, 'v'));
  const auto env = *signer.sign(s);
  const auto now = std::chrono::system_clock::now();
  int n = 0;
  const auto start = SteadyClock::now();
  while (secondsSince(start) < 2.0) {
    if (!(*verifier)->verify(env, now).ok()) return 0;
    ++n;
  }
  return n / secondsSince(start);
}

// Synced writes of 64 KiB records through the collector's own store, `per_batch` per sync.
double syncedWritesPerSecond(const std::string& dir, int per_batch) {
  auto store = ibc::collector::Store::open(dir);
  if (!store.ok()) return 0;
  std::mt19937_64 rng(per_batch);
  const std::string value(kSnapshotBytes, 'w');
  int n = 0;
  const auto start = SteadyClock::now();
  while (secondsSince(start) < 3.0) {
    std::vector<ibc::collector::SnapshotRecord> records(static_cast<std::size_t>(per_batch));
    std::vector<const ibc::collector::SnapshotRecord*> ptrs;
    for (auto& r : records) {
      char id[65];
      std::snprintf(id, sizeof id, "%016llx%016llx%016llx%016llx",
                    static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()),
                    static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()));
      r.info.set_snapshot_id(id);
      r.info.set_tenant("bench");
      r.info.set_job_id("1");
      r.info.set_node("node" + std::to_string(n % 1000));
      r.info.set_collected_at_unix_ms(n);
      r.envelope = value;
      ptrs.push_back(&r);
      ++n;
    }
    if (!(*store)->put(ptrs).ok()) return 0;
  }
  return n / secondsSince(start);
}

// Agent `agent`'s snapshot of round `round`, signed by that node's own certificate.
std::string frameFor(const ibc::core::SnapshotSigner& signer, int agent, int round) {
  static std::mt19937 rng(1);
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("node" + std::to_string(agent));
  s.mutable_node()->set_job_id("bench-" + std::to_string(round));
  s.mutable_node()->set_collected_at_unix_ms(1'700'000'000'000 + round);
  std::string text(kSnapshotBytes - 200, ' ');
  for (auto& c : text) c = static_cast<char>('a' + rng() % 26);
  s.add_nccl_logs()->set_raw(std::move(text));
  v1::CollectorRequest r;
  r.set_request_id(1);
  r.mutable_upload()->set_signed_snapshot(signer.sign(s)->SerializeAsString());
  return ibc::core::encodeFrame(r.SerializeAsString());
}

}  // namespace

int main(int argc, char** argv) {
  std::string collector_bin;
  std::string make_pki;
  std::vector<int> agent_counts = {100, 500, 1000};
  int rounds = 3;
  int client_threads = 2;
  std::vector<std::string> collector_args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--collector") collector_bin = v;
    if (k == "--make-pki") make_pki = v;
    if (k == "--rounds") rounds = std::stoi(v);
    if (k == "--client-threads") client_threads = std::stoi(v);
    if (k == "--collector-arg") collector_args.push_back(v);
    if (k == "--agents") {
      agent_counts.clear();
      std::stringstream in(v);
      std::string n;
      while (std::getline(in, n, ',')) agent_counts.push_back(std::stoi(n));
    }
  }
  if (collector_bin.empty() || make_pki.empty()) {
    std::cerr
        << "usage: collector_ingest_bench --collector BIN --make-pki SCRIPT "
           "[--agents 100,500,1000] [--rounds 3] [--client-threads 2] [--collector-arg ARG]...\n";
    return 3;
  }
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &files);
  ::signal(SIGPIPE, SIG_IGN);

  char tmpl[] = "/tmp/ibc-ingest-XXXXXX";
  const std::string work = ::mkdtemp(tmpl);
  const std::string pki = work + "/pki";
  const int max_agents = *std::max_element(agent_counts.begin(), agent_counts.end());
  std::vector<std::string> pki_args = {make_pki, pki, "--support", "bench"};
  for (int i = 0; i < max_agents; ++i) {
    pki_args.push_back("--agent");
    pki_args.push_back("bench/node" + std::to_string(i));
  }
  ibc::os::ProcessRunner runner;
  auto made = runner.run(pki_args, std::chrono::seconds(120));
  if (!made.ok() || made->exit_code != 0) {
    std::cerr << "make-pki failed\n";
    return 4;
  }
  std::vector<ibc::core::SnapshotSigner> signers;
  for (int i = 0; i < max_agents; ++i) {
    const std::string base = pki + "/agents/bench/node" + std::to_string(i);
    auto signer =
        ibc::core::SnapshotSigner::fromPem(readAll(base + ".pem"), readAll(base + ".key"));
    if (!signer.ok()) {
      std::cerr << base << ": " << signer.error().message << "\n";
      return 4;
    }
    signers.push_back(std::move(*signer));
  }
  const auto* signer = &signers.front();
  AgentTls tls = clientTls(pki, false, max_agents);
  AgentTls support_tls = clientTls(pki, true);

  std::printf("machine: %u cores (benchmark client and collector share them)\n",
              std::thread::hardware_concurrency());
  std::printf("\n== limits measured in this run\n");
  const double speed = opensslSpeedEd25519Verify();
  std::printf("openssl speed ed25519: %.0f verify/s (small message)\n", speed);
  const double verify64k = verify64kPerSecond(*signer, readAll(pki + "/ca.pem"));
  std::printf("Ed25519 verify of a 64 KiB snapshot (one core): %.0f /s\n", verify64k);
  const double synced1 = syncedWritesPerSecond(work + "/store-sync1", 1);
  std::printf("RocksDB synced writes, 64 KiB, one sync each: %.0f /s\n", synced1);
  const double synced64 = syncedWritesPerSecond(work + "/store-sync64", 64);
  std::printf("RocksDB synced writes, 64 KiB, group commit of 64: %.0f /s\n", synced64);
  double handshakes = 0;
  {
    // Enough handshakes in flight to saturate the machine: its limit, not a setting's.
    const auto c = startCollector(collector_bin, pki, work + "/data-hs", work + "/hs.log",
                                  {"--max-handshakes", "64"});
    RunStats hs;
    const int conns = 64;
    const int per = 40;
    v1::CollectorRequest stats_request;
    stats_request.mutable_stats();
    const std::vector<std::string> one = {
        ibc::core::encodeFrame(stats_request.SerializeAsString())};
    const double t = drive(conns, per, client_threads, support_tls, c.port, one, hs);
    handshakes = (conns * per - hs.failures) / t;
    stopCollector(c);
    std::printf(
        "TLS 1.3 mutual handshakes (+ one tiny request) against the collector, client on the "
        "same machine: %.0f /s\n",
        handshakes);
  }
  const double limit = std::min({verify64k, synced64, handshakes});
  std::printf(
      "limit of the ingest path = min(verify 64 KiB, group-commit writes, handshakes) = %.0f /s\n",
      limit);

  std::printf(
      "\n== ingest: N agents (each its own certificate, from %d loopback addresses), %d uploads "
      "each, a fresh mutual-TLS connection per upload; then the NAT burst: the largest N from "
      "one address (127.0.0.1)\n",
      kSourceAddresses, rounds);
  std::printf("%6s %8s %10s %7s %9s %9s %9s %9s %8s %9s\n", "agents", "uploads", "snaps/s",
              "%limit", "ack p50", "ack p99", "e2e p50", "e2e p99", "failed", "batch");
  std::vector<std::pair<int, bool>> phases;
  for (int agents : agent_counts) phases.push_back({agents, false});
  phases.push_back({max_agents, true});
  for (const auto& [agents, nat] : phases) {
    std::vector<std::string> frames;
    frames.reserve(static_cast<std::size_t>(agents * rounds));
    for (int r = 0; r < rounds; ++r) {
      for (int a = 0; a < agents; ++a) {
        frames.push_back(frameFor(signers[static_cast<std::size_t>(a)], a, r + (nat ? 1000 : 0)));
      }
    }
    const std::string data = work + "/data-" + std::to_string(agents) + (nat ? "-nat" : "");
    const auto c = startCollector(collector_bin, pki, data, work + "/ingest.log", collector_args);
    RunStats stats;
    const double t = drive(agents, rounds, client_threads, tls, c.port, frames, stats, nat);
    // The collector's own counters: stored and write batches.
    stopCollector(c);
    const std::string log = readAll(work + "/ingest.log");
    uint64_t stored = 0;
    uint64_t batches = 0;
    if (auto p = log.rfind("stored="); p != std::string::npos)
      stored = std::stoull(log.substr(p + 7));
    if (auto p = log.rfind("write_batches="); p != std::string::npos)
      batches = std::stoull(log.substr(p + 14));
    const double rate = static_cast<double>(stats.ack_ms.size()) / t;
    std::printf("%5d%s %8zu %10.0f %6.0f%% %7.1fms %7.1fms %7.1fms %7.1fms %8d %9.1f\n", agents,
                nat ? "*" : " ", stats.ack_ms.size(), rate, 100.0 * rate / limit,
                percentile(stats.ack_ms, 0.5), percentile(stats.ack_ms, 0.99),
                percentile(stats.end_to_end_ms, 0.5), percentile(stats.end_to_end_ms, 0.99),
                stats.failures.load(),
                batches > 0 ? static_cast<double>(stored) / static_cast<double>(batches) : 0.0);
    if (stats.failures > 0) std::printf("  first failure: %s\n", stats.first_failure.c_str());
    if (stored != stats.ack_ms.size()) {
      std::printf("  collector stored %llu, acknowledged %zu\n",
                  static_cast<unsigned long long>(stored), stats.ack_ms.size());
    }
    fs::remove_all(data);
  }
  std::printf("* = every agent from one address (a NAT'd tenant)\n");
  std::printf(
      "\nack = request written -> acknowledgement read (verify + durable write + queueing);\n"
      "e2e = TCP connect -> acknowledgement (adds the handshake and waiting for a handshake "
      "slot);\nbatch = snapshots per WAL sync (group commit).\n");
  fs::remove_all(work);
  return 0;
}
