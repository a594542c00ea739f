// collector_source.h: what the console needs before it asks the collector (the PEM files, the
// endpoint, a tenant) and what it says when the collector is not there. The answers of a real
// collector (listing, fetching, hashes, cases) are tests/integration/console_ui_test.cpp's.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "ibc/console/collector_source.h"
#include "ibc/console/error_advice.h"
#include "sysfs_json.h"
#include "test_pki.h"

using ::testing::HasSubstr;

namespace ibc::console {
namespace {

// A support certificate of a test CA, as the PEM files --ca, --cert and --key name.
CollectorSettings supportFiles(const std::string& endpoint) {
  static const auto ca = ibc::test::TestCa::create("console collector CA");
  const auto bob = ca.issue(ibc::test::supportSpec("bob"));
  const std::string dir = ibc::test::makeTempDir("console-collector");
  CollectorSettings s{endpoint, dir + "/ca.pem", dir + "/bob.pem", dir + "/bob.key"};
  std::ofstream(s.ca_file) << ca.certificatePem();
  std::ofstream(s.cert_file) << bob.certificate_pem;
  std::ofstream(s.key_file) << bob.key_pem;
  return s;
}

// A loopback port that refuses connections: bound, never listening, for the test's lifetime.
struct RefusingPort {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  RefusingPort() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~RefusingPort() {
    if (fd >= 0) ::close(fd);
  }
};

TEST(ReadCredentials, ThePemFilesAreReadWhole) {
  const CollectorSettings s = supportFiles("127.0.0.1:7070");
  const auto c = readCredentials(s);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_THAT(c->ca_pem, HasSubstr("-----BEGIN CERTIFICATE-----"));
  EXPECT_THAT(c->certificate_pem, HasSubstr("-----BEGIN CERTIFICATE-----"));
  EXPECT_THAT(c->key_pem, HasSubstr("PRIVATE KEY-----"));
}

TEST(ReadCredentials, AFlagNotSetOrAFileMissingIsNamed) {
  CollectorSettings s = supportFiles("127.0.0.1:7070");
  s.cert_file.clear();
  const auto unset = readCredentials(s);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.error().code, core::ErrorCode::InvalidArgument);
  EXPECT_EQ(unset.error().message, "--cert is not set");
  s.cert_file = s.ca_file;
  s.key_file = "/nonexistent/bob.key";
  const auto missing = readCredentials(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, core::ErrorCode::NotFound);
  EXPECT_EQ(missing.error().message, "--key /nonexistent/bob.key: No such file or directory");
  EXPECT_EQ(classifyError(missing.error().message), ErrorKind::Certificate);
}

TEST(ListTenantJobs, NoTenantOrABadEndpointIsRefusedBeforeAnyConnection) {
  const auto no_tenant = listTenantJobs(supportFiles("127.0.0.1:7070"), "");
  ASSERT_FALSE(no_tenant.ok());
  EXPECT_EQ(no_tenant.error().message, "no tenant given");
  const auto bad = listTenantJobs(supportFiles("no port here"), "acme");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("--collector: "));
}

TEST(CollectorSource, ACollectorThatIsNotThereIsNamedAndAdvisedAsDown) {
  const RefusingPort refusing;
  ASSERT_GT(refusing.port, 0);
  const std::string endpoint = "127.0.0.1:" + std::to_string(refusing.port);
  const CollectorSettings s = supportFiles(endpoint);
  const auto jobs = listTenantJobs(s, "acme");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.error().message, HasSubstr("cannot reach the collector at " + endpoint));
  EXPECT_EQ(classifyError(jobs.error().message), ErrorKind::CollectorDown);
  const auto fetched = fetchJob(s, "acme", "4242");
  ASSERT_FALSE(fetched.ok());
  EXPECT_THAT(fetched.error().message, HasSubstr("cannot reach the collector at " + endpoint));
  const auto cases = listCases(s, "acme");
  ASSERT_FALSE(cases.ok());
  EXPECT_THAT(cases.error().message, HasSubstr(endpoint));
}

}  // namespace
}  // namespace ibc::console
