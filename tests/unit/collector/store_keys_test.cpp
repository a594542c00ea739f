// The store's key layout (store/store_keys.cpp, declared in store/store_access.h): the
// bytes every index entry is written and deleted under, pinned so stores written by earlier
// collectors keep reading.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "store/store_access.h"

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;

// The on-disk layout (store.h): stores written by earlier collectors must keep reading and
// losing index entries to retention, so the keys are pinned here byte for byte.
TEST(StoreKeys, IndexKeysAreTheNamesThenTheTimeThenTheIdsKeyBytes) {
  v1::SnapshotInfo info;
  info.set_tenant("acme");
  info.set_job_id("77");
  info.set_node("node01");
  info.set_collected_at_unix_ms(1);
  const std::string id(32, '\x5a');
  const std::string time = std::string("\x80\0\0\0\0\0\0\x01", 8);
  EXPECT_EQ(byNodeKey(info, id), std::string("acme\0node01\0", 12) + time + id);
  EXPECT_EQ(byJobKey(info, id), std::string("acme\0"
                                            "77\0node01\0",
                                            15) +
                                    time + id);
  EXPECT_LT(timeKey(-1), timeKey(0));  // before 1970 sorts first
  EXPECT_LT(timeKey(0), timeKey(1'700'000'000'000));
  EXPECT_EQ(timeFromKey(timeKey(-42)), -42);
}

TEST(StoreKeys, TimeKeysAreEightBytesThatSortLikeTheTimesAndReadBack) {
  const std::vector<int64_t> times = {std::numeric_limits<int64_t>::min(),
                                      -1'700'000'000'000,
                                      -256,
                                      -1,
                                      0,
                                      1,
                                      255,
                                      256,
                                      1'700'000'000'000,
                                      std::numeric_limits<int64_t>::max()};
  std::vector<std::string> keys;
  for (int64_t t : times) {
    keys.push_back(timeKey(t));
    EXPECT_EQ(keys.back().size(), 8u) << t;
    EXPECT_EQ(timeFromKey(keys.back()), t);
  }
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
  EXPECT_EQ(timeKey(0), std::string("\x80\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(timeKey(-1), std::string("\x7f") + std::string(7, '\xff'));
}

TEST(StoreKeys, EachNameEndsInAZeroByteSoOneNameNeverPrefixesAnother) {
  EXPECT_EQ(joined({"acme", "77"}), std::string("acme\0"
                                                "77\0",
                                                8));
  EXPECT_EQ(joined({}), "");
  EXPECT_EQ(joined({"", "x"}), std::string("\0x\0", 3));
  v1::SnapshotInfo info;
  info.set_tenant("acme");
  info.set_job_id("7");
  info.set_node("node1");
  const std::string id(32, '\x01');
  // A scan of job "7" or node "node" must not reach job "77" or node "node1".
  EXPECT_NE(byJobKey(info, id).rfind(joined({"acme", "77"}), 0), 0u);
  EXPECT_EQ(byJobKey(info, id).rfind(joined({"acme", "7"}), 0), 0u);
  EXPECT_NE(byNodeKey(info, id).rfind(joined({"acme", "node"}), 0), 0u);
  EXPECT_EQ(byNodeKey(info, id).rfind(joined({"acme", "node1"}), 0), 0u);
  // The job key is the node key's parts with the job between tenant and node.
  EXPECT_EQ(byJobKey(info, id).size(), byNodeKey(info, id).size() + 2);
  EXPECT_EQ(byJobKey(info, id).substr(byJobKey(info, id).size() - 40),
            byNodeKey(info, id).substr(byNodeKey(info, id).size() - 40));
}

}  // namespace
}  // namespace ibc::collector
