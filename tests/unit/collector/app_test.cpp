// `ibcollect-collector` (app.cpp) in the test process: its command line and config file
// (keys equal the long flags; a mistake is named with FILE:LINE), its exit codes, `backup`
// with and without a running collector, and one whole run on 127.0.0.1 port 0 with a
// generated PKI, stopped by SIGTERM once it has answered a request.

#include "ibc/collector/app.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector_test_support.h"
#include "ibc/client/collector_client.h"
#include "ibc/collector/net/admin_socket.h"
#include "ibc/core/findings.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using ibc::test::TestCa;
using ibc::test::TestCredential;
using std::chrono::seconds;

struct Exit {
  int code = -1;
  std::string out;
  std::string err;
};

Exit run(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  Exit r;
  r.code = runCollector(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A test PKI written to `dir`: ca.pem, collector.pem, collector.key.
struct PkiFiles {
  explicit PkiFiles(const std::string& dir) : ca(TestCa::create()) {
    ibc::test::CertificateSpec spec;
    spec.name = "collector";
    spec.role = "collector";
    spec.server = true;
    spec.alt_names = {"IP:127.0.0.1"};
    server = ca.issue(spec);
    ca_path = dir + "/ca.pem";
    cert_path = dir + "/collector.pem";
    key_path = dir + "/collector.key";
    writeFile(ca_path, ca.certificatePem());
    writeFile(cert_path, server.certificate_pem);
    writeFile(key_path, server.key_pem);
  }
  TestCa ca;
  TestCredential server;
  std::string ca_path;
  std::string cert_path;
  std::string key_path;
};

// The long flags `--help` lists, without help, version and config.
std::set<std::string> helpFlags() {
  const Exit help = run({"--help"});
  EXPECT_EQ(help.code, 0);
  std::set<std::string> flags;
  const std::regex option(R"(^\s+(?:-\w,\s*)?--([a-z][a-z0-9-]*))");
  std::istringstream in(help.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option)) flags.insert(m[1]);
  }
  for (const char* not_a_key : {"help", "version", "config"}) {
    EXPECT_EQ(flags.erase(not_a_key), 1u) << not_a_key;
  }
  return flags;
}

TEST(CollectorCommandLine, VersionAnswersWithoutAnyOtherOption) {
  const Exit r = run({"--version"});
  EXPECT_EQ(r.code, core::kExitOk);
  EXPECT_THAT(r.out, StartsWith("ibcollect-collector "));
  EXPECT_EQ(r.err, "");
}

TEST(CollectorCommandLine, EveryLongFlagIsAConfigFileKeyWithTheSameChecks) {
  test::TempDir dir;
  const PkiFiles pki(dir.path());
  // A valid value for every key; --listen stays bad so the run ends after the checks.
  const std::map<std::string, std::string> values = {
      {"listen", "\"not an address\""},
      {"data", dir.path() + "/data"},
      {"ca", pki.ca_path},
      {"cert", pki.cert_path},
      {"key", pki.key_path},
      {"max-connections", "100"},
      {"max-handshakes", "4"},
      {"max-frame-bytes", "1048576"},
      {"max-inflight-mb", "64"},
      {"max-inflight-per-tenant-mb", "16"},
      {"max-pipelined-requests", "8"},
      {"max-handshakes-per-source", "2"},
      {"reserved-handshakes", "1"},
      {"max-unauthenticated-per-source", "8"},
      {"max-waiting-connections", "100"},
      {"first-byte-timeout", "3"},
      {"handshake-stall-timeout", "2"},
      {"handshake-timeout", "10"},
      {"idle-timeout", "60"},
      {"read-timeout", "30"},
      {"write-timeout", "30"},
      {"admission-timeout", "10"},
      {"min-free-mb", "0"},
      {"metrics", "127.0.0.1:0"},
      {"metrics-client-cert", "false"},
      {"retain-days", "30"},
      {"max-store-gb", "0.5"},
      {"drain-timeout", "30"},
      {"worker-threads", "2"},
  };
  std::set<std::string> keys;
  std::string text = "# every key of --help\n";
  for (const auto& [key, value] : values) {
    keys.insert(key);
    text += key + " = " + value + "\n";
  }
  EXPECT_EQ(keys, helpFlags()) << "a long flag without a config key here, or the reverse";
  const std::string config = dir.path() + "/collector.conf";
  writeFile(config, text);
  const Exit r = run({"--config", config});
  EXPECT_EQ(r.code, core::kExitUsage) << r.err;
  EXPECT_EQ(r.err, "ibcollect-collector: --listen wants ADDR:PORT, got 'not an address'\n");
}

TEST(CollectorCommandLine, AMistakeInTheConfigFileIsNamedWithItsFileAndLine) {
  test::TempDir dir;
  const PkiFiles pki(dir.path());
  const std::string config = dir.path() + "/collector.conf";
  const std::string head = "listen = 127.0.0.1:0\ndata = " + dir.path() +
                           "/data\nca = " + pki.ca_path + "\ncert = " + pki.cert_path +
                           "\nkey = " + pki.key_path + "\n";
  writeFile(config, head + "max-connections = many\n");
  Exit r = run({"--config=" + config});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, StartsWith("ibcollect-collector: " + config + ":6: max-connections: "));

  writeFile(config, head + "max-conections = 10\n");
  r = run({"--config", config});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_THAT(r.err, HasSubstr(config + ":6:"));
  EXPECT_THAT(r.err, HasSubstr("max-conections"));
  EXPECT_THAT(r.err, HasSubstr("max-connections"));  // among the valid keys listed

  r = run({"--config", dir.path() + "/missing.conf"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err,
            "ibcollect-collector: --config " + dir.path() +
                "/missing.conf: No such file or directory\n");  // the OS's reason
}

TEST(CollectorCommandLine, TheCommandLineWinsOverTheConfigFile) {
  test::TempDir dir;
  const PkiFiles pki(dir.path());
  const std::string config = dir.path() + "/collector.conf";
  writeFile(config, "listen = from-the-file\ndata = " + dir.path() + "/data\nca = " + pki.ca_path +
                        "\ncert = " + pki.cert_path + "\nkey = " + pki.key_path + "\n");
  const Exit r = run({"--config", config, "--listen", "from-the-command-line"});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err, "ibcollect-collector: --listen wants ADDR:PORT, got 'from-the-command-line'\n");
}

TEST(CollectorCommandLine, UsageErrorsExitThreeAndWhatCannotStartExitsFour) {
  test::TempDir dir;
  const PkiFiles pki(dir.path());
  const std::vector<std::string> base = {"--listen", "127.0.0.1:0", "--data", dir.path() + "/data",
                                         "--ca",     pki.ca_path,   "--cert", pki.cert_path,
                                         "--key",    pki.key_path};
  // The base arguments with `more`'s flags replacing the same flag's value or added.
  const auto with = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args = base;
    for (std::size_t i = 0; i < more.size(); ++i) {
      if (more[i].empty()) continue;
      const auto same = std::find(args.begin(), args.end(), more[i]);
      if (same != args.end() && i + 1 < more.size() && !more[i + 1].empty()) {
        *(same + 1) = more[++i];
      } else {
        args.push_back(more[i]);
      }
    }
    return run(args);
  };
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  writeFile(dir.path() + "/not-a-ca.pem", "not PEM");
  writeFile(dir.path() + "/a-file", "");
  const std::vector<Case> cases = {
      {{"--read-timeout", "0"}, core::kExitUsage, "timeouts must be positive seconds"},
      {{"--max-pipelined-requests", "0"}, core::kExitUsage, "--max-pipelined-requests"},
      {{"--retain-days=-1", ""}, core::kExitUsage, "--retain-days"},
      {{"--metrics", "nowhere"}, core::kExitUsage, "--metrics wants ADDR:PORT, got 'nowhere'"},
      {{"--ca", dir.path() + "/no-such.pem"}, core::kExitUsage, "no-such.pem"},
      {{"--ca", dir.path() + "/not-a-ca.pem"}, core::kExitCollectFailed, "not-a-ca.pem: "},
      {{"--data", dir.path() + "/a-file"}, core::kExitCollectFailed, "ibcollect-collector: "},
  };
  for (const auto& c : cases) {
    const Exit r = with(c.args);
    EXPECT_EQ(r.code, c.code) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args[0];
    EXPECT_EQ(r.out, "") << "nothing listened";
  }
  const Exit missing = run({"--listen", "127.0.0.1:0"});
  EXPECT_EQ(missing.code, core::kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("--data is required"));
}

// A store in `dir` holding one snapshot (hexId(1)).
void storeOneSnapshot(const std::string& dir) {
  auto store = Store::open(dir);
  ASSERT_TRUE(store.ok()) << store.error().message;
  const SnapshotRecord record =
      test::storedRecord(1, "acme", "77", "node01", 1000, 2000, "the envelope");
  ASSERT_TRUE((*store)->put({&record}).ok());
}

TEST(CollectorBackup, WithNoCollectorRunningBackupOpensTheStoreAndCheckpointsIt) {
  test::TempDir dir;
  const std::string data = dir.path() + "/data";
  const std::string dest = dir.path() + "/backup";
  storeOneSnapshot(data);
  const Exit r = run({"backup", "--data", data, dest});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  EXPECT_THAT(r.out,
              StartsWith("backup of " + data + " in " + dest + " (no collector running): bytes="));
  auto copy = Store::open(dest);
  ASSERT_TRUE(copy.ok()) << copy.error().message;
  auto got = (*copy)->get(test::hexId(1));
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->envelope, "the envelope");
}

TEST(CollectorBackup, AnExistingDestinationOrADirectoryWithoutAStoreIsRefused) {
  test::TempDir dir;
  const std::string data = dir.path() + "/data";
  storeOneSnapshot(data);
  Exit r = run({"backup", "--data", data, dir.path()});
  EXPECT_EQ(r.code, core::kExitUsage);
  EXPECT_EQ(r.err, "ibcollect-collector backup: " + dir.path() +
                       " already exists: name a new directory\n");

  std::filesystem::create_directory(dir.path() + "/empty");
  r = run({"backup", "--data", dir.path() + "/empty", dir.path() + "/backup"});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_EQ(r.err, "ibcollect-collector backup: " + dir.path() + "/empty holds no store\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/backup"));

  r = run({"backup", "--data", dir.path() + "/nowhere", dir.path() + "/backup"});
  EXPECT_EQ(r.code, core::kExitUsage);
}

TEST(CollectorBackup, WithACollectorRunningBackupAsksItThroughTheAdminSocket) {
  test::TempDir dir;
  test::CapturedLog log;
  std::string asked;
  std::string answer = "ok bytes=5 ms=1";
  auto admin = AdminSocket::start(
      dir.path() + "/admin.sock",
      [&](const std::string& request) {
        asked = request;
        return answer;
      },
      log);
  ASSERT_TRUE(admin.ok()) << admin.error().message;
  Exit r = run({"backup", "--data", dir.path(), "relative/dest"});
  ASSERT_EQ(r.code, core::kExitOk) << r.err;
  const std::string absolute = (std::filesystem::current_path() / "relative/dest").string();
  EXPECT_EQ(asked, "checkpoint " + absolute);
  EXPECT_EQ(r.out, "backup of " + dir.path() + " in " + absolute +
                       " by the running collector: bytes=5 ms=1\n");

  answer = "error No space left on device";
  r = run({"backup", "--data", dir.path(), dir.path() + "/backup"});
  EXPECT_EQ(r.code, core::kExitCollectFailed);
  EXPECT_EQ(r.err,
            "ibcollect-collector backup: the collector answered: error No space left on device\n");
}

// What runCollector writes to `out`, readable from another thread while it runs.
class SharedOutput : public std::streambuf {
 public:
  // Waits until a whole line starting with `prefix` was written; returns it ("" on timeout).
  std::string waitForLine(const std::string& prefix) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::string found;
    wrote_.wait_for(lock, seconds(60), [&] {
      std::istringstream in(text_);
      for (std::string line; std::getline(in, line);) {
        if (line.rfind(prefix, 0) == 0 && !in.eof()) {
          found = line;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) {
      const char ch = static_cast<char>(c);
      xsputn(&ch, 1);
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      text_.append(s, static_cast<std::size_t>(n));
    }
    wrote_.notify_all();
    return n;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wrote_;
  std::string text_;
};

uint16_t portOf(const std::string& line) {
  return static_cast<uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
}

// The whole program: port 0, the bound address on the first line, the metrics address on
// the second, a support certificate's stats request answered over mutual TLS, a backup
// through the admin socket while it runs, and on SIGTERM a clean stop with its counters.
TEST(CollectorRun, ServesOnTheAddressItPrintsAndStopsCleanlyOnSigterm) {
  test::TempDir dir;
  const PkiFiles pki(dir.path());
  const std::string data = dir.path() + "/data";
  SharedOutput out_buffer;
  std::ostream out(&out_buffer);
  std::ostringstream err;  // read only after the run ends
  auto finished = std::async(std::launch::async, [&] {
    return runCollector({"--listen", "127.0.0.1:0", "--data", data, "--ca", pki.ca_path, "--cert",
                         pki.cert_path, "--key", pki.key_path, "--metrics", "127.0.0.1:0"},
                        out, err);
  });
  const std::string listening = out_buffer.waitForLine("listening on 127.0.0.1:");
  const std::string metrics = out_buffer.waitForLine("metrics on 127.0.0.1:");
  if (listening.empty() || metrics.empty()) {
    ADD_FAILURE() << "no address printed: " << out_buffer.text();
    // Still starting (its handler may not be in place yet): SIGTERM would end the tests.
    if (finished.wait_for(seconds(0)) != std::future_status::ready) std::abort();
    return;
  }
  EXPECT_EQ(out_buffer.text().rfind(listening, 0), 0u) << "the bound address is the first line";
  EXPECT_NE(portOf(listening), 0);

  const TestCredential alice = pki.ca.issue(ibc::test::supportSpec("alice"));
  auto c = client::CollectorConnection::open(
      {"127.0.0.1", portOf(listening)},
      {pki.ca.certificatePem(), alice.certificate_pem, alice.key_pem}, {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  v1::CollectorRequest stats;
  stats.mutable_stats();
  auto answered = (*c)->call(stats);
  // Answered: the server runs, so its SIGTERM handler is in place.
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  EXPECT_TRUE(answered->has_stats()) << answered->DebugString();
  (*c).reset();

  const Exit backup = run({"backup", "--data", data, dir.path() + "/backup"});
  EXPECT_EQ(backup.code, core::kExitOk) << backup.err;
  EXPECT_THAT(backup.out, HasSubstr("by the running collector: bytes="));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/backup/CURRENT"));

  std::raise(SIGTERM);
  ASSERT_EQ(finished.wait_for(seconds(60)), std::future_status::ready);
  EXPECT_EQ(finished.get(), core::kExitOk);
  const std::string log = err.str();
  EXPECT_THAT(log, HasSubstr("event=collector_started listen=127.0.0.1:" +
                             std::to_string(portOf(listening))));
  EXPECT_THAT(log, HasSubstr("event=backup_done"));
  EXPECT_THAT(log, HasSubstr("event=signal_received signal=SIGTERM"));
  EXPECT_THAT(log, HasSubstr("event=collector_stopped connections=1 requests=1 stored=0"));
  EXPECT_FALSE(std::filesystem::exists(data + "/admin.sock"));
}

}  // namespace
}  // namespace ibc::collector
