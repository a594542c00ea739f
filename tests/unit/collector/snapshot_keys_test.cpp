#include "ibc/collector/service/snapshot_keys.h"

#include <gtest/gtest.h>

#include <random>

#include "collector_test_support.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::collector {
namespace {

TEST(SnapshotKeys, ReadsJobNodeAndTimeFromAFullSnapshot) {
  auto s = test::makeSnapshot("host01", "4242", 1700000000123);
  // Bulk around the node identity: devices, counters and a raw log before and after it.
  for (int d = 0; d < 8; ++d) {
    auto* dev = s.add_devices();
    dev->set_name("mlx5_" + std::to_string(d));
    auto* port = dev->add_ports();
    for (int c = 0; c < 100; ++c) {
      auto* counter = port->add_counters();
      counter->set_name("counter_" + std::to_string(c));
      counter->set_value(static_cast<uint64_t>(c) * 1000);
    }
  }
  s.add_nccl_logs()->set_raw(std::string(20000, 'x'));
  const std::string bytes = core::serializeSnapshot(s);
  auto keys = readSnapshotIndexKeys(bytes);
  ASSERT_TRUE(keys.ok()) << keys.error().message;
  EXPECT_EQ(keys->job_id, "4242");
  EXPECT_EQ(keys->node, "host01");
  EXPECT_EQ(keys->collected_at_unix_ms, 1700000000123);
}

TEST(SnapshotKeys, TheSlurmNodeNameWinsOverTheHostname) {
  auto s = test::makeSnapshot("host01.example.com", "1", 1);
  s.mutable_node()->set_slurm_node("gpu-017");
  auto keys = readSnapshotIndexKeys(core::serializeSnapshot(s));
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->node, "gpu-017");
}

TEST(SnapshotKeys, AnEmptySnapshotHasEmptyKeys) {
  auto keys = readSnapshotIndexKeys("");
  ASSERT_TRUE(keys.ok());
  EXPECT_TRUE(keys->node.empty());
  EXPECT_TRUE(keys->job_id.empty());
}

TEST(SnapshotKeys, GarbageAndTruncatedBytesAreMalformed) {
  const std::string good = core::serializeSnapshot(test::makeSnapshot("h", "j", 5));
  EXPECT_EQ(readSnapshotIndexKeys(good.substr(0, good.size() - 3)).error().code,
            core::ErrorCode::Malformed);
  EXPECT_FALSE(readSnapshotIndexKeys(std::string("\x12\xff\xff\xff\x0f", 5)).ok());
  EXPECT_FALSE(readSnapshotIndexKeys(std::string("\x00\x01", 2)).ok());  // field 0
  std::mt19937 rng(3);
  int malformed = 0;
  for (int i = 0; i < 500; ++i) {
    std::string junk(1 + rng() % 200, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    if (!readSnapshotIndexKeys(junk).ok()) ++malformed;
  }
  EXPECT_GT(malformed, 250);
}

TEST(SnapshotKeys, NamesWithZeroBytesOrTooLongAreMalformed) {
  auto s = test::makeSnapshot(std::string("ho\0st", 5), "1", 1);
  EXPECT_EQ(readSnapshotIndexKeys(core::serializeSnapshot(s)).error().code,
            core::ErrorCode::Malformed);
  auto t = test::makeSnapshot("h", std::string(kMaxIndexNameBytes + 1, 'j'), 1);
  EXPECT_FALSE(readSnapshotIndexKeys(core::serializeSnapshot(t)).ok());
}

}  // namespace
}  // namespace ibc::collector
