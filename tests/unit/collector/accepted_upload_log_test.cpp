#include "ibc/collector/service/accepted_upload_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collector_test_support.h"
#include "ibc/collector/service/service.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::collector {
namespace {

using std::chrono::milliseconds;

class AcceptedUploadLogTest : public ::testing::Test {
 protected:
  AcceptedUpload upload(int n, const std::string& tenant = "acme", bool already = false) {
    return {"id" + std::to_string(n), tenant, "77", "node" + std::to_string(n), 1000, already};
  }
  Peer peer(const std::string& tenant = "acme") {
    Peer p;
    p.identity.tenant = tenant;
    p.identity.role = core::CertificateRole::Agent;
    p.identity.name = "node01";
    p.address = "127.0.0.1:4000";
    return p;
  }
  std::vector<std::string> lines(std::string_view event) const {
    std::vector<std::string> out;
    for (const auto& l : log_.lines()) {
      if (l.find("event=" + std::string(event) + " ") != std::string::npos) out.push_back(l);
    }
    return out;
  }

  test::CapturedLog log_;
  std::chrono::steady_clock::time_point now_{std::chrono::seconds(100)};
  AcceptedUploadLog accepted_{log_, 5, [this] { return now_; }};
};

TEST_F(AcceptedUploadLogTest, ARareUploadHasALineOfItsOwnWithItsSnapshotAndPeer) {
  accepted_.accepted(peer(), upload(1));
  const auto own = lines("upload_accepted");
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0],
            "level=info event=upload_accepted snapshot=id1 job=77 node=node1 bytes=1000 "
            "already_stored=false peer=127.0.0.1:4000 tenant=acme role=agent cn=node01");
  now_ += milliseconds(1500);
  accepted_.tick();
  EXPECT_TRUE(lines("uploads_accepted").empty()) << "nothing was left to count";
}

TEST_F(AcceptedUploadLogTest, UnderLoadASecondIsOneLineAndEveryUploadIsInExactlyOneLine) {
  for (int i = 0; i < 1000; ++i) {
    accepted_.accepted(peer(), upload(i, "acme", i % 100 == 0));
    now_ += std::chrono::microseconds(900);  // 1,000 in 0.9 s
  }
  accepted_.tick();
  EXPECT_TRUE(lines("uploads_accepted").empty()) << "the second has not ended";
  now_ += milliseconds(200);
  accepted_.tick();
  EXPECT_EQ(lines("upload_accepted").size(), 5u);
  const auto counted = lines("uploads_accepted");
  ASSERT_EQ(counted.size(), 1u);
  // Uploads 0..4 had their own line (0 was already stored); 995 are counted, 9 of them
  // (100, 200, ..., 900) already stored.
  EXPECT_EQ(counted[0],
            "level=info event=uploads_accepted count=995 tenants=1 tenant=acme stored=986 "
            "already_stored=9 bytes=995000 seconds=1");
  accepted_.tick();
  EXPECT_EQ(lines("uploads_accepted").size(), 1u) << "a second is counted once";
}

TEST_F(AcceptedUploadLogTest, TheNextSecondStartsAfreshAndNamesNoTenantWhenThereAreSeveral) {
  for (int i = 0; i < 8; ++i) {
    const std::string tenant = i % 2 ? "acme" : "globex";
    accepted_.accepted(peer(tenant), upload(i, tenant));
  }
  now_ += milliseconds(1000);
  // This upload ends the previous second before it is logged on its own.
  accepted_.accepted(peer("globex"), upload(8, "globex"));
  const auto counted = lines("uploads_accepted");
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_THAT(counted[0], HasSubstr("count=3 tenants=2 stored=3"));
  EXPECT_THAT(counted[0], Not(HasSubstr("tenant=")));
  EXPECT_EQ(lines("upload_accepted").size(), 6u);
}

TEST_F(AcceptedUploadLogTest, ADrainWritesThePartOfASecondNotCountedYet) {
  for (int i = 0; i < 7; ++i) accepted_.accepted(peer(), upload(i));
  now_ += milliseconds(400);
  accepted_.flush();
  const auto counted = lines("uploads_accepted");
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_THAT(counted[0], HasSubstr("count=2 "));
  EXPECT_THAT(counted[0], HasSubstr(" seconds=0.4"));
}

}  // namespace
}  // namespace ibc::collector
