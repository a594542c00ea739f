// Collector operations (docs/operations.md, issue 14) on the real `ibcollect-collector` process
// with a PKI made by certs/make-pki: Prometheus metrics scraped over HTTP and parsed by the real
// Prometheus text parser (python3-prometheus-client), retention at start, a backup under
// load restored into a new collector, and the event log's shape and rate limit.

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "collector_process.h"
#include "ibc/agent/upload.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/frame.h"
#include "ibc/core/signing.h"
#include "ibc/os/os.h"
#include "upload_load.h"

using ::testing::HasSubstr;
using ::testing::Not;

using namespace ibc::test;  // the test PKI and the collector these tests run

namespace {

namespace fs = std::filesystem;
using ibc::agent::CollectorConnection;
using ibc::os::ProcessRunner;

// Reads until the peer closes or `timeout` passes.
std::string readToEnd(int fd, milliseconds timeout = seconds(10)) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Sends `request` as is and returns the whole answer.
std::string http(int port, const std::string& request) {
  const int fd = rawConnect(port);
  if (fd < 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer = readToEnd(fd);
  ::close(fd);
  return answer;
}

std::string body(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

// "name{k=v,...}" → value, as Prometheus' own parser reads the exposition text.
std::map<std::string, double> parseWithPrometheus(const std::string& text, const std::string& dir) {
  const std::string in = dir + "/metrics.txt";
  std::ofstream(in, std::ios::binary | std::ios::trunc) << text;
  const std::string script =
      "import sys\n"
      "from prometheus_client.parser import text_string_to_metric_families\n"
      "for f in text_string_to_metric_families(open(sys.argv[1]).read()):\n"
      "    for s in f.samples:\n"
      "        labels = ','.join(k + '=' + v for k, v in sorted(s.labels.items()))\n"
      "        print(f.type, s.name + '{' + labels + '}', repr(float(s.value)))\n";
  ProcessRunner runner;
  // Debian's python3 (python3-prometheus-client), not whichever python is first on PATH.
  auto r = runner.run({"/usr/bin/python3", "-c", script, in}, seconds(60));
  EXPECT_TRUE(r.ok());
  std::map<std::string, double> out;
  if (!r.ok()) return out;
  EXPECT_EQ(r->exit_code, 0) << r->err;
  std::istringstream lines(r->out);
  std::string type, name, value;
  while (lines >> type >> name >> value) out[name] = std::stod(value);
  return out;
}

class Ops : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Short: the admin socket's path (DATA/admin.sock) must fit a socket address.
    std::string pattern = (fs::temp_directory_path() / "ibc-ops-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    pki_ = root_ + "/pki";
    ProcessRunner runner;
    auto made = runner.run({IBC_MAKE_PKI, pki_, "--agent", "acme/node01", "--agent", "globex/gx01",
                            "--support", "alice"},
                           seconds(60));
    ASSERT_TRUE(made.ok());
    ASSERT_EQ(made->exit_code, 0) << made->err;
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  void SetUp() override {
    static int n = 0;
    dir_ = root_ + "/t" + std::to_string(++n);
    fs::create_directories(dir_);
  }

  static Identity agent(const std::string& tenant, const std::string& node) {
    return agentIdentity(pki_, tenant, node);
  }
  static Identity support() { return supportIdentity(pki_); }

  std::unique_ptr<CollectorProcess> startCollector(std::vector<std::string> extra = {},
                                                   const std::string& data = "data") {
    return std::make_unique<CollectorProcess>(
        IBC_COLLECTOR_BINARY, collectorArgs(pki_, path(data), extra), path("collector.log"));
  }

  static std::unique_ptr<CollectorConnection> connect(int port, const Identity& who) {
    ibc::agent::TlsCredentials creds{readAll(pki_ + "/ca.pem"), readAll(who.cert),
                                     readAll(who.key)};
    auto c = CollectorConnection::open({"127.0.0.1", static_cast<uint16_t>(port)}, creds, {});
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return c.ok() ? std::move(*c) : nullptr;
  }

  static Identity node01() { return agent("acme", "node01"); }

  // An upload request of node01's snapshot number `n`, signed by node01's certificate.
  static v1::CollectorRequest upload(int n, std::size_t padding = 0) {
    static const auto signer =
        ibc::core::SnapshotSigner::fromPem(readAll(node01().cert), readAll(node01().key));
    if (!signer.ok()) {
      ADD_FAILURE() << "node01's signer: " << signer.error().message;
      return {};
    }
    v1::Snapshot s;
    s.mutable_node()->set_hostname("node01");
    s.mutable_node()->set_job_id("ops");
    s.mutable_node()->set_collected_at_unix_ms(1'700'000'000'000 + n);
    if (padding > 0)
      s.add_nccl_logs()->set_raw(std::string(padding, static_cast<char>('a' + n % 26)));
    v1::CollectorRequest r;
    r.mutable_upload()->set_signed_snapshot(signer->sign(s)->SerializeAsString());
    return r;
  }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  static std::string root_;
  static std::string pki_;
  std::string dir_;
};

std::string Ops::root_;
std::string Ops::pki_;

TEST_F(Ops, MetricsScrapedOverHttpMatchWhatWasSent) {
  const auto test_started = std::chrono::system_clock::now();
  auto collector = startCollector({"--metrics", "127.0.0.1:0"});
  const std::string metrics_address = collector->stdoutLine("metrics on ");
  ASSERT_EQ(metrics_address.rfind("127.0.0.1:", 0), 0u) << metrics_address;
  const int metrics_port = std::stoi(metrics_address.substr(10));

  uint64_t frame_bytes = 0;
  std::map<CollectorConnection*, uint64_t> request_ids;  // call() numbers requests from 1
  const auto send = [&](CollectorConnection& c, v1::CollectorRequest r) {
    r.set_request_id(++request_ids[&c]);
    frame_bytes += ibc::core::encodeFrame(r.SerializeAsString()).size();
    auto answer = c.call(r);
    EXPECT_TRUE(answer.ok());
    return answer.ok() ? *answer : v1::CollectorResponse();
  };
  auto held = connect(collector->port(), node01());  // stays open during the scrape
  ASSERT_NE(held, nullptr);
  // Three new snapshots, one of them twice.
  for (int n = 0; n < 3; ++n) EXPECT_TRUE(send(*held, upload(n, 1000)).has_ack());
  EXPECT_TRUE(send(*held, upload(0, 1000)).has_ack());
  // A tampered signature, and another tenant uploading acme's snapshot.
  {
    auto c = connect(collector->port(), node01());
    auto bad = upload(7, 1000);  // the flipped byte lands in the signed snapshot
    std::string bytes = bad.upload().signed_snapshot();
    bytes[bytes.size() / 2] ^= 0x20;
    bad.mutable_upload()->set_signed_snapshot(bytes);
    const auto r = send(*c, bad);
    EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_BAD_SIGNATURE) << r.DebugString();
  }
  {
    auto c = connect(collector->port(), agent("globex", "gx01"));
    const auto r = send(*c, upload(8));
    EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_TENANT_MISMATCH) << r.DebugString();
  }

  std::map<std::string, double> m;
  // The two short connections close asynchronously: scrape until only `held` is open.
  ASSERT_TRUE(eventually([&] {
    const std::string answer = http(metrics_port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer.substr(0, 200);
    EXPECT_THAT(answer, HasSubstr("Content-Type: text/plain; version=0.0.4"));
    m = parseWithPrometheus(body(answer), dir_);
    return m["ibcollect_open_connections{}"] == 1;
  })) << "open connections: "
      << m["ibcollect_open_connections{}"];

  EXPECT_EQ(m["ibcollect_uploads_accepted_total{outcome=stored}"], 3);
  EXPECT_EQ(m["ibcollect_uploads_accepted_total{outcome=duplicate}"], 1);
  EXPECT_EQ(m["ibcollect_rejections_total{reason=REJECT_REASON_BAD_SIGNATURE}"], 1);
  EXPECT_EQ(m["ibcollect_rejections_total{reason=REJECT_REASON_TENANT_MISMATCH}"], 1);
  EXPECT_EQ(m.count("ibcollect_rejections_total{reason=REJECT_REASON_UNKNOWN_CA}"), 1u);
  EXPECT_EQ(m["ibcollect_rejections_total{reason=REJECT_REASON_UNKNOWN_CA}"], 0);
  EXPECT_EQ(m["ibcollect_received_bytes_total{}"], static_cast<double>(frame_bytes));
  EXPECT_EQ(m["ibcollect_writer_queue_depth{}"], 0);
  EXPECT_EQ(m["ibcollect_connections_total{}"], 3);
  // Four acknowledgements, each in some bucket; buckets are cumulative.
  EXPECT_EQ(m["ibcollect_ack_latency_seconds_count{}"], 4);
  EXPECT_EQ(m["ibcollect_ack_latency_seconds_bucket{le=+Inf}"], 4);
  EXPECT_GT(m["ibcollect_ack_latency_seconds_sum{}"], 0);
  EXPECT_LE(m["ibcollect_ack_latency_seconds_bucket{le=0.001}"],
            m["ibcollect_ack_latency_seconds_bucket{le=10}"]);
  EXPECT_EQ(m["ibcollect_ack_latency_seconds_bucket{le=10}"], 4);
  std::size_t buckets = 0;
  for (const auto& [name, value] : m) {
    if (name.rfind("ibcollect_ack_latency_seconds_bucket{", 0) != 0) continue;
    ++buckets;
  }
  EXPECT_EQ(buckets, 14u);  // 13 bounds and +Inf
  EXPECT_GT(m["ibcollect_store_size_bytes{}"], 3 * 1000);
  EXPECT_EQ(m["ibcollect_store_size_bytes{}"], m["ibcollect_store_part_bytes{part=sst}"] +
                                                   m["ibcollect_store_part_bytes{part=blob}"] +
                                                   m["ibcollect_store_part_bytes{part=wal}"]);
  const double start = m["process_start_time_seconds{}"];
  const double t0 = std::chrono::duration<double>(test_started.time_since_epoch()).count();
  EXPECT_GE(start, t0 - 1);
  EXPECT_LE(start, t0 + 60);

  // The log names the rejections but holds no snapshot contents and no key material.
  const std::string log = collector->log();
  EXPECT_THAT(log, HasSubstr("event=upload_rejected reason=bad_signature"));
  EXPECT_THAT(log, HasSubstr("event=upload_rejected reason=tenant_mismatch"));
  EXPECT_THAT(log, Not(HasSubstr(std::string(64, 'h'))));  // snapshot 7's NCCL text
  std::istringstream key_lines(readAll(pki_ + "/collector.key") + readAll(node01().key));
  for (std::string line; std::getline(key_lines, line);) {
    if (line.size() > 20 && line.find("-----") == std::string::npos) {
      EXPECT_THAT(log, Not(HasSubstr(line))) << "key material in the log";
    }
  }
  EXPECT_THAT(log, Not(HasSubstr("PRIVATE KEY")));

  // Only GET/HEAD /metrics; bounded request heads; HTTP or nothing.
  EXPECT_EQ(http(metrics_port, "GET /other HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(http(metrics_port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(http(metrics_port, "hello\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  const std::string head = http(metrics_port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(body(head), "");
  const std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'x') + "\r\n\r\n";
  EXPECT_EQ(http(metrics_port, huge).rfind("HTTP/1.1 431", 0), 0u);
  // A silent client is closed at the deadline and does not hold up another scrape.
  const int silent = rawConnect(metrics_port);
  ASSERT_GE(silent, 0);
  EXPECT_EQ(http(metrics_port, "GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  const auto waited = std::chrono::steady_clock::now();
  EXPECT_EQ(readToEnd(silent, seconds(20)), "");
  EXPECT_LT(std::chrono::steady_clock::now() - waited, seconds(10));
  ::close(silent);
}

TEST_F(Ops, RetentionAtStartDeletesOldSnapshotsEverywhereAndLogsIt) {
  // A store with 30 snapshots received 40 days ago and 10 received today.
  const int64_t now_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  const auto id = [](int n) {
    std::string s(64, 'a');
    const std::string d = std::to_string(n);
    return s.replace(64 - d.size(), d.size(), d);
  };
  {
    auto store = ibc::collector::Store::open(path("data"));
    ASSERT_TRUE(store.ok()) << store.error().message;
    std::vector<ibc::collector::SnapshotRecord> records(40);
    std::vector<const ibc::collector::SnapshotRecord*> ptrs;
    for (int n = 0; n < 40; ++n) {
      auto& r = records[static_cast<std::size_t>(n)];
      r.info.set_snapshot_id(id(n));
      r.info.set_tenant("acme");
      r.info.set_job_id("77");
      r.info.set_node("node01");
      r.info.set_collected_at_unix_ms(now_ms - 50LL * 86'400'000 + n);
      r.info.set_received_at_unix_ms(n < 30 ? now_ms - 40LL * 86'400'000 + n : now_ms);
      r.envelope = std::string(50'000, static_cast<char>('a' + n % 26));
      r.info.set_size_bytes(r.envelope.size());
      ptrs.push_back(&r);
    }
    ASSERT_TRUE((*store)->put(ptrs).ok());
  }
  // The policy from a config file: its keys are the long flags' names.
  std::ofstream(path("collector.conf")) << "retain-days = 30\nmax-store-gb = 100\n";
  auto collector = startCollector({"--config", path("collector.conf")});
  ASSERT_TRUE(eventually([&] {
    return collector->log().find("event=retention_done") != std::string::npos;
  })) << collector->log();
  const std::string log = collector->log();
  EXPECT_THAT(log, HasSubstr("event=retention_done deleted=30 deleted_bytes=1500000"));
  auto c = connect(collector->port(), support());
  ASSERT_NE(c, nullptr);
  for (int n = 0; n < 40; ++n) {
    v1::CollectorRequest r;
    r.mutable_fetch()->set_snapshot_id(id(n));
    auto got = c->call(r);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->has_snapshot(), n >= 30) << n;
  }
  v1::CollectorRequest list;
  list.mutable_list_snapshots()->set_tenant("acme");
  list.mutable_list_snapshots()->set_job_id("77");
  auto listed = c->call(list);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->snapshots().snapshots_size(), 10);
}

TEST_F(Ops, BackupUnderLoadHoldsEveryAcknowledgedSnapshotAndRestoresIntoANewCollector) {
  auto collector = startCollector();
  const int port = collector->port();

  UploadLoad load(
      2, [&] { return connect(port, node01()); },
      [&](int t, int i) { return upload(t * 1'000'000 + i, 32 * 1024); });
  const auto count = [&] { return load.count(); };
  ASSERT_TRUE(eventually([&] { return count() >= 100; }));
  const std::size_t before = count();
  ProcessRunner runner;
  auto backup = runner.run(
      {IBC_COLLECTOR_BINARY, "backup", "--data", path("data"), path("backups/b1")}, seconds(120));
  const std::size_t after = count();
  ASSERT_TRUE(eventually([&] { return count() >= after + 20; }));  // ingest went on
  load.stop();
  ASSERT_TRUE(backup.ok());
  ASSERT_EQ(backup->exit_code, 0) << backup->err << collector->log();
  EXPECT_THAT(backup->out, HasSubstr("by the running collector: bytes="));
  EXPECT_THAT(collector->log(), HasSubstr("event=backup_done dest=" + path("backups/b1")));
  std::cout << "backup under load: " << backup->out << "acknowledged before it: " << before
            << ", while it ran: " << after - before << "\n";
  // Backing up into an existing directory is refused.
  auto twice = runner.run(
      {IBC_COLLECTOR_BINARY, "backup", "--data", path("data"), path("backups/b1")}, seconds(60));
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->exit_code, 3) << twice->err;

  collector->signal(SIGTERM);
  EXPECT_EQ(collector->waitExit(), 0);
  collector.reset();
  // With no collector running, backup opens the store itself.
  auto offline = runner.run(
      {IBC_COLLECTOR_BINARY, "backup", "--data", path("data"), path("backups/b2")}, seconds(60));
  ASSERT_TRUE(offline.ok());
  EXPECT_EQ(offline->exit_code, 0) << offline->err;
  EXPECT_THAT(offline->out, HasSubstr("(no collector running)"));

  // Restore: a collector on the backup serves every snapshot acknowledged before it began.
  const auto acked = load.acked();
  auto restored = startCollector({}, "backups/b1");
  auto c = connect(restored->port(), support());
  ASSERT_NE(c, nullptr);
  for (std::size_t i = 0; i < before; ++i) {
    v1::CollectorRequest r;
    r.mutable_fetch()->set_snapshot_id(acked[i].first);
    auto got = c->call(r);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(got->has_snapshot()) << i << " " << got->DebugString();
    EXPECT_EQ(got->snapshot().signed_snapshot(), acked[i].second);
  }
  // The offline backup holds everything acknowledged.
  restored->signal(SIGTERM);
  EXPECT_EQ(restored->waitExit(), 0);
  restored.reset();
  auto offline_restored = startCollector({}, "backups/b2");
  auto c2 = connect(offline_restored->port(), support());
  ASSERT_NE(c2, nullptr);
  for (const auto& [id, bytes] : acked) {
    v1::CollectorRequest r;
    r.mutable_fetch()->set_snapshot_id(id);
    auto got = c2->call(r);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(got->has_snapshot()) << id;
  }
}

TEST_F(Ops, AFloodOfRejectedConnectionsIsRateLimitedInTheLogButCountedInFull) {
  auto collector = startCollector();
  const int port = collector->port();
  // 300 connections that send something other than TLS: each is a rejection.
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 300; ++i) {
    const int fd = rawConnect(port);
    ASSERT_GE(fd, 0);
    const std::string junk = "GET / HTTP/1.0\r\n\r\n";
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    readToEnd(fd, seconds(5));
    ::close(fd);
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto c = connect(port, support());
  ASSERT_NE(c, nullptr);
  v1::CollectorRequest stats;
  stats.mutable_stats();
  auto s = c->call(stats);
  ASSERT_TRUE(s.ok());
  uint64_t counted = 0;
  for (const auto& r : s->stats().rejections()) {
    if (r.reason() == v1::REJECT_REASON_TLS_HANDSHAKE_FAILED) counted = r.count();
  }
  EXPECT_EQ(counted, 300u);
  collector->signal(SIGTERM);
  EXPECT_EQ(collector->waitExit(), 0);

  const std::string log = collector->log();
  std::istringstream lines(log);
  const std::regex shape(
      R"(ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(info|warn|error) event=[a-z_]+)"
      R"(( [a-z_]+=([^ "=\\]+|"([^"\\]|\\.)*"))*)");
  std::size_t logged = 0;
  uint64_t suppressed = 0;
  const std::regex count_field(R"(count=(\d+))");
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, shape)) << line;
    if (line.find("event=connection_rejected reason=tls_handshake_failed peer=127.0.0.1:") !=
        std::string::npos) {
      ++logged;
    }
    std::smatch match;
    if (line.find("event=log_suppressed kind=connection_rejected/tls_handshake_failed") !=
            std::string::npos &&
        std::regex_search(line, match, count_field)) {
      suppressed += std::stoull(match[1]);
    }
  }
  std::cout << "300 rejected connections in " << elapsed << " s: " << logged << " lines logged, "
            << suppressed << " suppressed\n";
  EXPECT_GE(logged, 20u);
  EXPECT_LE(static_cast<double>(logged), 20 * (elapsed + 1));
  EXPECT_EQ(logged + suppressed, 300u);
}

}  // namespace

namespace {

TEST(OpsHelp, HelpFitsEightyColumnsAndNamesEveryOperationsFlag) {
  ProcessRunner runner;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{IBC_COLLECTOR_BINARY, "--help"},
        std::vector<std::string>{IBC_COLLECTOR_BINARY, "backup", "--help"}}) {
    auto r = runner.run(args, seconds(30));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->exit_code, 0) << r->err;
    std::istringstream lines(r->out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 80u) << line;
    }
  }
  auto r = runner.run({IBC_COLLECTOR_BINARY, "--help"}, seconds(30));
  ASSERT_TRUE(r.ok());
  for (const char* flag :
       {"--metrics ADDR:PORT", "--retain-days N", "--max-store-gb X", "backup"}) {
    EXPECT_THAT(r->out, HasSubstr(flag)) << flag << " in\n" << r->out;
  }
}

}  // namespace
