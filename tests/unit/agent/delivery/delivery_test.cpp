#include "ibc/agent/delivery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <set>

#include "ibc/core/snapshot_file.h"
#include "os_doubles.h"

using ::testing::HasSubstr;

namespace ibc::agent {
namespace {

namespace v1 = ::ibcollect::v1;
namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A collector double: scripted answers per call, and the set of ids it "stored".
struct FakeCollector {
  // Each connect() pops one entry: true = connects, false = refused. Empty: connects.
  std::deque<bool> connects;
  // Each call pops one scripted behaviour; empty: acknowledge.
  enum class Answer { Ack, Drop, Overloaded, BadSignature };
  std::deque<Answer> answers;
  std::set<std::string> stored;
  int connect_calls = 0;
  int calls = 0;
};

class FakeSession final : public CollectorSession {
 public:
  explicit FakeSession(FakeCollector& c) : c_(c) {}
  core::Result<v1::CollectorResponse> call(v1::CollectorRequest request) override {
    // As CollectorConnection: a connection that failed fails every later call at once.
    if (broken_) return core::Error{core::ErrorCode::Io, "connection already failed"};
    ++c_.calls;
    const auto answer = c_.answers.empty() ? FakeCollector::Answer::Ack : c_.answers.front();
    if (!c_.answers.empty()) c_.answers.pop_front();
    v1::SignedSnapshot env;
    env.ParseFromString(request.upload().signed_snapshot());
    const std::string id = core::snapshotId(env);
    v1::CollectorResponse r;
    r.set_request_id(request.request_id());
    switch (answer) {
      case FakeCollector::Answer::Ack:
        r.mutable_ack()->set_snapshot_id(id);
        r.mutable_ack()->set_already_stored(!c_.stored.insert(id).second);
        return r;
      case FakeCollector::Answer::Drop:
        // Stored, but the acknowledgement is lost with the connection.
        c_.stored.insert(id);
        broken_ = true;
        return core::Error{core::ErrorCode::Io, "connection reset"};
      case FakeCollector::Answer::Overloaded:
        r.mutable_rejection()->set_reason(v1::REJECT_REASON_OVERLOADED);
        r.mutable_rejection()->set_retryable(true);
        r.mutable_rejection()->set_message("busy");
        return r;
      case FakeCollector::Answer::BadSignature:
        r.mutable_rejection()->set_reason(v1::REJECT_REASON_BAD_SIGNATURE);
        r.mutable_rejection()->set_message("does not match");
        return r;
    }
    return r;
  }

 private:
  FakeCollector& c_;
  bool broken_ = false;
};

class FakeConnector final : public CollectorConnector {
 public:
  explicit FakeConnector(FakeCollector& c) : c_(c) {}
  core::Result<std::unique_ptr<CollectorSession>> connect() override {
    ++c_.connect_calls;
    const bool ok = c_.connects.empty() || c_.connects.front();
    if (!c_.connects.empty()) c_.connects.pop_front();
    if (!ok) return core::Error{core::ErrorCode::Unavailable, "collector c:1: Connection refused"};
    return std::unique_ptr<CollectorSession>(std::make_unique<FakeSession>(c_));
  }
  std::string describe() const override { return "c:1"; }

 private:
  FakeCollector& c_;
};

v1::SignedSnapshot envelope(int n) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname("node" + std::to_string(n));
  auto env = core::wrapUnsigned(s);
  env.set_signature_algorithm("ed25519");
  env.set_signature(std::string(64, 's'));
  return env;
}

std::string makeTempDir() {
  std::string pattern = (fs::temp_directory_path() / "ibc-delivery-XXXXXX").string();
  return ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
}

class DeliveryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }
  void TearDown() override { fs::remove_all(dir_); }

  SnapshotDelivery delivery() {
    return SnapshotDelivery(connector_, spool_, clock_, retry_,
                            [this](const std::string& m) { notices_.push_back(m); });
  }

  std::string dir_ = makeTempDir();  // before spool_, which lives in it
  FakeCollector collector_;
  FakeConnector connector_{collector_};
  ibc::test::SteppingClock clock_;
  RetryPolicy retry_;
  std::vector<std::string> notices_;
  RootedFilesystem files_{""};
  DiskFileWriter disk_;
  Spool spool_{dir_ + "/spool", {}, files_, disk_};
};

TEST(Backoff, DoublesFromTheFirstDelayUpToTheCapWithJitter) {
  RetryPolicy p;
  p.first_backoff = milliseconds(500);
  p.max_backoff = milliseconds(3000);
  for (uint64_t seed : {1ull, 2ull, 99ull}) {
    const int64_t bases[] = {500, 1000, 2000, 3000, 3000};
    for (int attempt = 1; attempt <= 5; ++attempt) {
      const auto d = backoffDelay(p, attempt, seed).count();
      EXPECT_GE(d, bases[attempt - 1] / 2) << attempt;
      EXPECT_LE(d, bases[attempt - 1]) << attempt;
    }
  }
  EXPECT_EQ(backoffDelay(p, 2, 7), backoffDelay(p, 2, 7));
  EXPECT_NE(backoffDelay(p, 2, 7), backoffDelay(p, 2, 8));
}

TEST_F(DeliveryTest, AnAcknowledgedSnapshotIsDeliveredAndNotSpooled) {
  auto d = delivery();
  auto out = d.deliver(envelope(1));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, DeliveryStatus::Delivered);
  EXPECT_EQ(out->attempts, 1);
  EXPECT_EQ(out->snapshot_id, core::snapshotId(envelope(1)));
  EXPECT_TRUE(spool_.pending()->empty());
  EXPECT_TRUE(clock_.sleeps.empty());
  // One connection for several snapshots.
  ASSERT_TRUE(d.deliver(envelope(2)).ok());
  EXPECT_EQ(collector_.connect_calls, 1);
}

TEST_F(DeliveryTest, RetriesWithGrowingBackoffThenSpoolsAndSaysWhere) {
  collector_.connects = {false, false, false, false};
  auto out = delivery().deliver(envelope(1));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, DeliveryStatus::Spooled);
  EXPECT_EQ(out->attempts, 4);
  EXPECT_THAT(out->detail, HasSubstr("Connection refused"));
  EXPECT_EQ(out->kept_at, dir_ + "/spool/" + out->snapshot_id + ".ibsnap");
  EXPECT_TRUE(fs::exists(out->kept_at));
  ASSERT_EQ(clock_.sleeps.size(), 3u);  // between the 4 tries, none after the last
  EXPECT_LT(clock_.sleeps[0], clock_.sleeps[2]);
  EXPECT_LE(clock_.sleeps[2], retry_.max_backoff);
  EXPECT_EQ(notices_.size(), 3u);
  EXPECT_THAT(notices_[0], HasSubstr("retrying in"));
}

TEST_F(DeliveryTest, ALostAcknowledgementIsRetriedAndRecognisedNotStoredTwice) {
  collector_.answers = {FakeCollector::Answer::Drop};
  auto out = delivery().deliver(envelope(1));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->status, DeliveryStatus::AlreadyStored);
  EXPECT_EQ(out->attempts, 2);
  EXPECT_EQ(collector_.stored.size(), 1u);
  EXPECT_EQ(collector_.connect_calls, 2);  // the broken connection was replaced
}

TEST_F(DeliveryTest, OverloadIsRetriedAndAPermanentRefusalIsKeptAsideNotRetried) {
  collector_.answers = {FakeCollector::Answer::Overloaded};
  auto busy = delivery().deliver(envelope(1));
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->status, DeliveryStatus::Delivered);
  EXPECT_EQ(busy->attempts, 2);

  collector_.answers = {FakeCollector::Answer::BadSignature};
  const int calls = collector_.calls;
  auto refused = delivery().deliver(envelope(2));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, DeliveryStatus::Rejected);
  EXPECT_EQ(collector_.calls, calls + 1);
  EXPECT_THAT(refused->detail, HasSubstr("bad_signature"));
  EXPECT_EQ(refused->kept_at, dir_ + "/spool/rejected/" + refused->snapshot_id + ".ibsnap");
  EXPECT_TRUE(spool_.pending()->empty());
}

TEST_F(DeliveryTest, NotDeliveredAndNotKeptIsAnErrorThatSaysBoth) {
  SpoolLimits none;
  none.max_files = 0;
  Spool full(dir_ + "/full", none, files_, disk_);
  collector_.connects = {false, false, false, false};
  SnapshotDelivery d(connector_, full, clock_, retry_);
  auto out = d.deliver(envelope(1));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.error().message, HasSubstr("Connection refused"));
  EXPECT_THAT(out.error().message, HasSubstr("spool full"));
}

TEST_F(DeliveryTest, FlushSendsEverythingOnceAndStopsWhenTheCollectorIsDown) {
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(spool_.keep(envelope(i)).ok());
  // Down: the first snapshot fails all its tries, the rest are not attempted.
  collector_.connects = {false, false, false, false};
  auto down = delivery().flush();
  EXPECT_EQ(down.delivered, 0);
  EXPECT_EQ(down.remaining, 3);
  EXPECT_EQ(spool_.pending()->size(), 3u);
  EXPECT_EQ(collector_.connect_calls, 4);

  // Up, with one acknowledgement lost on the way.
  collector_.answers = {FakeCollector::Answer::Ack, FakeCollector::Answer::Drop};
  auto up = delivery().flush();
  EXPECT_EQ(up.delivered, 2);
  EXPECT_EQ(up.already_stored, 1);
  EXPECT_EQ(up.remaining, 0);
  EXPECT_TRUE(up.problems.empty());
  EXPECT_TRUE(spool_.pending()->empty());
  EXPECT_EQ(collector_.stored.size(), 3u);

  auto again = delivery().flush();
  EXPECT_EQ(again.delivered + again.already_stored, 0);
}

// deliverAll: the session double answers through the default callPipelined (one call per
// request), so its script applies per snapshot, in order.
std::vector<const v1::SignedSnapshot*> pointers(const std::vector<v1::SignedSnapshot>& envs) {
  std::vector<const v1::SignedSnapshot*> out;
  for (const auto& e : envs) out.push_back(&e);
  return out;
}

TEST_F(DeliveryTest, ABatchGoesOverOneConnectionAndEachSnapshotHasItsOwnOutcome) {
  std::vector<v1::SignedSnapshot> envs;
  for (int i = 1; i <= 6; ++i) envs.push_back(envelope(i));
  using A = FakeCollector::Answer;
  // 2 is refused for good, 3's acknowledgement is lost with the connection, and 4-6 fail
  // with it; 3-6 go again, on a new connection, after one backoff.
  collector_.answers = {A::Ack, A::BadSignature, A::Drop};
  auto d = delivery();
  const auto out = d.deliverAll(pointers(envs));
  ASSERT_EQ(out.size(), 6u);
  for (const auto& o : out) ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(out[0]->status, DeliveryStatus::Delivered);
  EXPECT_EQ(out[1]->status, DeliveryStatus::Rejected);
  EXPECT_EQ(out[1]->kept_at, dir_ + "/spool/rejected/" + out[1]->snapshot_id + ".ibsnap");
  EXPECT_EQ(out[2]->status, DeliveryStatus::AlreadyStored);
  EXPECT_EQ(out[2]->attempts, 2);
  for (int i = 3; i < 6; ++i) {
    EXPECT_EQ(out[i]->status, DeliveryStatus::Delivered) << i;
    EXPECT_EQ(out[i]->attempts, 2) << i;
    EXPECT_EQ(out[i]->snapshot_id, core::snapshotId(envs[i]));
  }
  EXPECT_EQ(collector_.connect_calls, 2);
  EXPECT_EQ(collector_.stored.size(), 5u);
  EXPECT_EQ(clock_.sleeps.size(), 1u);  // one backoff for the round, not one per snapshot
  EXPECT_TRUE(spool_.pending()->empty());
}

TEST_F(DeliveryTest, ABatchTheCollectorNeverTakesIsSpooledSnapshotBySnapshot) {
  std::vector<v1::SignedSnapshot> envs;
  for (int i = 1; i <= 5; ++i) envs.push_back(envelope(i));
  collector_.connects = {false, false, false, false};
  const auto out = delivery().deliverAll(pointers(envs));
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_TRUE(out[i].ok());
    EXPECT_EQ(out[i]->status, DeliveryStatus::Spooled);
    EXPECT_EQ(out[i]->attempts, 4);
    EXPECT_THAT(out[i]->detail, HasSubstr("Connection refused"));
    EXPECT_TRUE(fs::exists(out[i]->kept_at)) << out[i]->kept_at;
  }
  EXPECT_EQ(collector_.connect_calls, 4) << "one connection attempt per round, not per snapshot";
  EXPECT_EQ(spool_.pending()->size(), 5u);
  ASSERT_EQ(notices_.size(), 3u);
  EXPECT_THAT(notices_[0], HasSubstr("5 snapshots not delivered yet"));
}

TEST_F(DeliveryTest, ABatchThatCannotBeKeptSaysSoForEachSnapshot) {
  SpoolLimits none;
  none.max_files = 0;
  Spool full(dir_ + "/full", none, files_, disk_);
  collector_.connects = {false, false, false, false};
  SnapshotDelivery d(connector_, full, clock_, retry_);
  std::vector<v1::SignedSnapshot> envs = {envelope(1), envelope(2)};
  for (const auto& o : d.deliverAll(pointers(envs))) {
    ASSERT_FALSE(o.ok());
    EXPECT_THAT(o.error().message, HasSubstr("spool full"));
  }
}

TEST(AgentConfig, ParsesEveryKeyAndRejectsUnknownOnes) {
  auto s = parseAgentConfig(
      "# agent\ncollector = \"collector.example:7443\"\nca = /etc/ibcollect/ca.pem\n"
      "cert=/etc/ibcollect/node.pem\nkey = '/etc/ibcollect/node.key'\nspool = /tmp/s\n"
      "spool-limit-mb = 64\nretries = 2\n",
      "agent.conf");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->collector, "collector.example:7443");
  EXPECT_EQ(s->ca, "/etc/ibcollect/ca.pem");
  EXPECT_EQ(s->cert, "/etc/ibcollect/node.pem");
  EXPECT_EQ(s->key, "/etc/ibcollect/node.key");
  EXPECT_EQ(s->spool, "/tmp/s");
  EXPECT_EQ(s->spool_limit_mb, 64u);
  EXPECT_EQ(s->retries, 2);

  auto unknown = parseAgentConfig("# agent\n\ncolector = x:1\n", "/etc/ibcollect/agent.conf");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "/etc/ibcollect/agent.conf:3: unknown key 'colector' (valid keys: ca, cert, collector, "
            "key, retries, spool, spool-limit-mb)");
  auto many = parseAgentConfig("ca = /ca.pem\nretries = many\n", "a.conf");
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().message, "a.conf:2: retries wants a number from 0 to 100, got 'many'");
  auto zero = parseAgentConfig("spool-limit-mb = 0\n", "a.conf");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.error().message, HasSubstr("a.conf:1: spool-limit-mb"));
}

// `key: value` (a YAML habit) means the same; trailing comments and sections are handled.
TEST(AgentConfig, ColonSyntaxAndCommentsAreAcceptedSectionsAndDuplicatesAreNot) {
  auto s = parseAgentConfig("collector: gw:7443   # the site collector\nretries: 1\n", "a.conf");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->collector, "gw:7443");
  EXPECT_EQ(s->retries, 1);
  auto section = parseAgentConfig("[agent]\ncollector = gw:1\n", "a.conf");
  ASSERT_FALSE(section.ok());
  EXPECT_THAT(section.error().message, HasSubstr("a.conf:1: sections are not used"));
  auto twice = parseAgentConfig("ca = /a\nca = /b\n", "a.conf");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.error().message, HasSubstr("a.conf:2: ca is given twice"));
  auto open_quote = parseAgentConfig("ca = \"/a\n", "a.conf");
  ASSERT_FALSE(open_quote.ok());
  EXPECT_THAT(open_quote.error().message,
              HasSubstr("a.conf:1: ca: the quoted value is not closed"));
  auto no_sep = parseAgentConfig("collector gw:1\n", "a.conf");
  ASSERT_FALSE(no_sep.ok());
  EXPECT_THAT(no_sep.error().message, HasSubstr("a.conf:1: expected `key = value`"));
}

TEST(AgentConfig, FlagsWinOverTheFileAndFilesAreReadThroughTheSeam) {
  TransportSettings file;
  file.collector = "a:1";
  file.ca = "/ca.pem";
  file.cert = "/file.pem";
  file.key = "/file.key";
  TransportSettings flags;
  flags.collector = "b:2";
  flags.retries = 0;
  const auto merged = mergeSettings(file, flags);
  EXPECT_EQ(merged.collector, "b:2");
  EXPECT_EQ(merged.cert, "/file.pem");

  MemoryFilesystem fs;
  fs.addFile("/ca.pem", "CA");
  fs.addFile("/file.pem", "CERT");
  auto missing_key = loadDeliveryConfig(merged, fs);
  ASSERT_FALSE(missing_key.ok());
  EXPECT_EQ(missing_key.error().code, core::ErrorCode::NotFound);
  fs.addFile("/file.key", "KEY");
  auto config = loadDeliveryConfig(merged, fs);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->collector.host, "b");
  EXPECT_EQ(config->collector.port, 2);
  EXPECT_EQ(config->credentials.key_pem, "KEY");
  EXPECT_EQ(config->retry.attempts, 1);
  EXPECT_EQ(config->spool_dir, std::string(kDefaultSpoolDir));

  TransportSettings no_collector = merged;
  no_collector.collector.clear();
  EXPECT_EQ(loadDeliveryConfig(no_collector, fs).error().code, core::ErrorCode::InvalidArgument);
}

TEST(CollectorEndpoint, ParsesHostPortAndBracketedV6) {
  auto a = parseCollectorEndpoint("collector.example:7443");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "collector.example");
  EXPECT_EQ(a->port, 7443);
  auto b = parseCollectorEndpoint("[::1]:9");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->text(), "[::1]:9");
  for (const char* bad : {"", "host", "host:", ":80", "host:0", "host:70000", "host:8x"}) {
    EXPECT_FALSE(parseCollectorEndpoint(bad).ok()) << bad;
  }
}

TEST(DefaultSpoolDir, IsTheSystemSpoolForRootAndPerUserOtherwise) {
  EXPECT_EQ(defaultSpoolDir(true, "/x/state", "/home/u"), "/var/spool/ibcollect");
  EXPECT_EQ(defaultSpoolDir(false, "/x/state", "/home/u"), "/x/state/ibcollect/spool");
  EXPECT_EQ(defaultSpoolDir(false, "", "/home/u"), "/home/u/.local/state/ibcollect/spool");
  // XDG says a relative XDG_STATE_HOME is invalid and must be ignored.
  EXPECT_EQ(defaultSpoolDir(false, "rel", "/home/u"), "/home/u/.local/state/ibcollect/spool");
}

}  // namespace
}  // namespace ibc::agent
