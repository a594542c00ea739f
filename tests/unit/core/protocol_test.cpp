#include "ibc/core/protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

TEST(Protocol, RejectReasonsHaveStableShortNames) {
  EXPECT_EQ(rejectReasonName(v1::REJECT_REASON_BAD_SIGNATURE), "bad_signature");
  EXPECT_EQ(rejectReasonName(v1::REJECT_REASON_TENANT_MISMATCH), "tenant_mismatch");
  EXPECT_EQ(rejectReasonName(static_cast<v1::RejectReason>(999)), "reason_999");
}

TEST(Protocol, OnlyOverloadShutdownAndStorageFailuresAreRetryable) {
  EXPECT_TRUE(isRetryable(v1::REJECT_REASON_OVERLOADED));
  EXPECT_TRUE(isRetryable(v1::REJECT_REASON_SHUTTING_DOWN));
  EXPECT_TRUE(isRetryable(v1::REJECT_REASON_STORAGE_FAILURE));
  EXPECT_FALSE(isRetryable(v1::REJECT_REASON_BAD_SIGNATURE));
  EXPECT_FALSE(isRetryable(v1::REJECT_REASON_TENANT_MISMATCH));
  EXPECT_FALSE(isRetryable(v1::REJECT_REASON_UNSPECIFIED));
}

TEST(Protocol, ARejectionReadsAsItsReasonThenItsMessage) {
  v1::Rejection r;
  r.set_reason(v1::REJECT_REASON_NODE_MISMATCH);
  r.set_message("signed by gpu02, describes gpu01");
  EXPECT_EQ(describeRejection(r), "node_mismatch: signed by gpu02, describes gpu01");
}

TEST(Protocol, EndpointsParseNamesV4AndBracketedV6) {
  auto a = parseCollectorEndpoint("collector.example:7443");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "collector.example");
  EXPECT_EQ(a->port, 7443);
  EXPECT_EQ(a->text(), "collector.example:7443");
  auto b = parseCollectorEndpoint("[::1]:9");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 9);
  EXPECT_EQ(b->text(), "[::1]:9");
  auto c = parseCollectorEndpoint("127.0.0.1:65535");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->port, 65535);
}

TEST(Protocol, EndpointsWithoutAValidPortAreRefusedQuotingTheText) {
  for (const std::string bad :
       {"", "host", "host:", ":80", "host:0", "host:65536", "host:8o", "host:-1", "[]:80"}) {
    auto e = parseCollectorEndpoint(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.error().code, ErrorCode::InvalidArgument);
    EXPECT_THAT(e.error().message, HasSubstr("'" + bad + "'"));
  }
}

}  // namespace
}  // namespace ibc::core
