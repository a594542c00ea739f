#include "ibc/core/snapshot_file.h"

#include <gtest/gtest.h>

#include <string>

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

std::string fileOf(const std::string& hostname) {
  v1::Snapshot s;
  s.set_schema_version(kSnapshotSchemaVersion);
  s.mutable_node()->set_hostname(hostname);
  return encodeSnapshotFile(wrapUnsigned(s));
}

TEST(ReadSnapshotFile, GivesTheSnapshotInsideTheEnvelope) {
  auto snap = readSnapshotFile("run/gpu01.ibsnap", fileOf("gpu01"));
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  EXPECT_EQ(snap->node().hostname(), "gpu01");
}

TEST(ReadSnapshotFile, NamesTheFileInEveryError) {
  const std::string good = fileOf("gpu01");
  struct Case {
    std::string bytes;
    ErrorCode code;
  };
  for (const Case& c :
       {Case{"", ErrorCode::Malformed}, Case{"not a snapshot", ErrorCode::Malformed},
        Case{good.substr(0, good.size() / 2), ErrorCode::Malformed},
        Case{"IBSNAP99" + good.substr(8), ErrorCode::Unsupported}}) {
    auto snap = readSnapshotFile("run/bad.ibsnap", c.bytes);
    ASSERT_FALSE(snap.ok());
    EXPECT_EQ(snap.error().code, c.code) << snap.error().message;
    EXPECT_EQ(snap.error().message.rfind("run/bad.ibsnap: ", 0), 0u) << snap.error().message;
  }
}

TEST(ReadSnapshotFile, RefusesASchemaNewerThanThisBuild) {
  v1::Snapshot s;
  s.set_schema_version(kSnapshotSchemaVersion + 1);
  auto snap = readSnapshotFile("new.ibsnap", encodeSnapshotFile(wrapUnsigned(s)));
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.error().code, ErrorCode::Unsupported) << snap.error().message;
}

}  // namespace
}  // namespace ibc::core
