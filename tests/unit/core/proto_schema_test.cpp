// The wire schema, pinned. tests/fixtures/golden/proto/<file>.txt lists every message,
// field (number, name, label, type) and enum value of proto/ibcollect/v1/<file>.proto as
// this build compiled them. Renumbering or retyping a field is a wire break: stored
// snapshots, spools and bundles would read back as something else. Never do it; add new
// numbers and `reserved` removed ones. After an intended addition, regenerate with
//   scripts/update-golden.sh
// (IBC_UPDATE_GOLDEN=1 on this test) and review the diff of the golden files like code.
//
// Beside it: bytes written by an older schema still parse as they meant (the window that
// became a list, the netdevs string that became a list).

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fixtures.h"
#include "ibc/core/counters.h"
#include "ibc/core/snapshot_file.h"
#include "ibcollect/v1/report.pb.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;
namespace v1 = ::ibcollect::v1;

std::string label(const pb::FieldDescriptor& f) {
  if (f.is_repeated()) return "repeated";
  if (f.has_optional_keyword()) return "optional";
  if (f.real_containing_oneof() != nullptr) return "oneof " + f.real_containing_oneof()->name();
  return "singular";
}

std::string type(const pb::FieldDescriptor& f) {
  if (f.message_type() != nullptr) return f.message_type()->full_name();
  if (f.enum_type() != nullptr) return f.enum_type()->full_name();
  return f.type_name();
}

void dumpEnum(const pb::EnumDescriptor& e, std::ostream& out) {
  out << "enum " << e.full_name() << "\n";
  std::set<std::pair<int, std::string>> values;
  for (int i = 0; i < e.value_count(); ++i)
    values.emplace(e.value(i)->number(), e.value(i)->name());
  for (const auto& [n, name] : values) out << "  " << n << " " << name << "\n";
  for (int i = 0; i < e.reserved_range_count(); ++i) {
    out << "  reserved " << e.reserved_range(i)->start << ".." << e.reserved_range(i)->end << "\n";
  }
}

void dumpMessage(const pb::Descriptor& m, std::ostream& out) {
  out << "message " << m.full_name() << "\n";
  std::set<std::pair<int, std::string>> fields;
  for (int i = 0; i < m.field_count(); ++i) {
    const auto& f = *m.field(i);
    fields.emplace(f.number(), f.name() + " " + label(f) + " " + type(f));
  }
  for (const auto& [n, text] : fields) out << "  " << n << " " << text << "\n";
  for (int i = 0; i < m.reserved_range_count(); ++i) {
    out << "  reserved " << m.reserved_range(i)->start << ".." << m.reserved_range(i)->end - 1
        << "\n";
  }
  for (int i = 0; i < m.reserved_name_count(); ++i) {
    out << "  reserved \"" << m.reserved_name(i) << "\"\n";
  }
  for (int i = 0; i < m.enum_type_count(); ++i) dumpEnum(*m.enum_type(i), out);
  for (int i = 0; i < m.nested_type_count(); ++i) dumpMessage(*m.nested_type(i), out);
}

std::string dumpFile(const pb::FileDescriptor& file) {
  std::ostringstream out;
  out << "# " << file.name()
      << " as compiled (tests/unit/core/proto_schema_test.cpp).\n"
         "# Renumbering or retyping a field is a wire break: never; reserve removed numbers.\n"
         "# Regenerate after an intended addition: scripts/update-golden.sh\n";
  for (int i = 0; i < file.enum_type_count(); ++i) dumpEnum(*file.enum_type(i), out);
  for (int i = 0; i < file.message_type_count(); ++i) dumpMessage(*file.message_type(i), out);
  return out.str();
}

bool updating() {
  const char* u = std::getenv("IBC_UPDATE_GOLDEN");
  return u != nullptr && std::string(u) == "1";
}

TEST(ProtoSchema, EveryProtoFileMatchesItsCheckedInDescriptorDump) {
  // The sources, so that a new .proto file without a golden fails too.
  const fs::path dir = fs::path(IBC_FIXTURES_DIR) / ".." / ".." / "proto" / "ibcollect" / "v1";
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".proto") names.insert(e.path().stem().string());
  }
  ASSERT_GE(names.size(), 6u) << dir;
  // Linked in: ibc_proto compiles every file of the directory.
  (void)v1::Report::descriptor();
  for (const auto& name : names) {
    const auto* file =
        pb::DescriptorPool::generated_pool()->FindFileByName("ibcollect/v1/" + name + ".proto");
    ASSERT_NE(file, nullptr) << name << ".proto is not compiled into ibc_proto";
    const std::string actual = dumpFile(*file);
    const std::string path = ibc::test::fixturePath("golden/proto/" + name + ".txt");
    if (updating()) {
      std::ofstream(path, std::ios::binary) << actual;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in.good()) << path << " is missing: run scripts/update-golden.sh";
    std::stringstream expected;
    expected << in.rdbuf();
    EXPECT_EQ(actual, expected.str())
        << name << ".proto differs from " << path
        << ": a renumbered or retyped field is a wire break (never); an added one needs "
           "scripts/update-golden.sh and a review of the diff";
  }
}

TEST(ProtoSchema, TheDumpSeesARenumberedField) {
  // The dump names numbers, so a renumbering cannot pass unnoticed.
  const std::string dump = dumpFile(*v1::Snapshot::descriptor()->file());
  EXPECT_THAT(dump,
              HasSubstr("message ibcollect.v1.Snapshot\n  1 schema_version singular uint32\n"))
      << dump.substr(0, 400);
  EXPECT_THAT(dump, HasSubstr("  9 window repeated ibcollect.v1.CounterWindow\n"));
}

TEST(StoredSchema, ASnapshotStoredWithOneWindowReadsAsAListOfOneAndKeepsItsId) {
  // Written by `ibcollect snapshot --window 0.2` when `window` was a singular field
  // (tests/fixtures/stored/README.md).
  const std::string bytes = ibc::test::readFixture("stored/mlx5-window-schema1.ibsnap");
  auto envelope = decodeSnapshotFile(bytes);
  ASSERT_TRUE(envelope.ok()) << envelope.error().message;
  auto snap = openSnapshot(*envelope);
  ASSERT_TRUE(snap.ok()) << snap.error().message;
  ASSERT_EQ(snap->window_size(), 1);
  EXPECT_GT(snap->window(0).interval_seconds(), 0.0);
  EXPECT_GT(snap->window(0).ports_size(), 0);
  EXPECT_EQ(latestWindow(*snap), &snap->window(0));
  EXPECT_TRUE(CounterWindowIndex(*snap).present());
  // Re-encoded by this build, the snapshot is the same bytes: its id does not change.
  EXPECT_EQ(serializeSnapshot(*snap), envelope->snapshot());
  EXPECT_EQ(encodeSnapshotFile(*envelope), bytes);
}

TEST(StoredSchema, AReportPortWithTheOldJoinedNetdevsStringReadsAsOneEntry) {
  // PortSummary.netdevs = 10 was `string`: tag (10 << 3 | 2), length, "ib0,ib1".
  const std::string old_bytes = std::string("\x52\x07", 2) + "ib0,ib1";
  v1::PortSummary p;
  ASSERT_TRUE(p.ParseFromString(old_bytes));
  ASSERT_EQ(p.netdevs_size(), 1);
  EXPECT_EQ(p.netdevs(0), "ib0,ib1");
  // And a list of one is the old string's bytes.
  v1::PortSummary one;
  one.add_netdevs("ib0,ib1");
  EXPECT_EQ(one.SerializeAsString(), old_bytes);
}

TEST(StoredSchema, PresenceOfARateAndACollectionTimeIsKeptAndZeroIsNotAbsence) {
  v1::PortSummary p;
  EXPECT_FALSE(p.has_rate_gbps());
  p.set_rate_gbps(0);
  v1::PortSummary back;
  ASSERT_TRUE(back.ParseFromString(p.SerializeAsString()));
  EXPECT_TRUE(back.has_rate_gbps());
  v1::NodeReport n;
  EXPECT_FALSE(n.has_collected_at_unix_ms());
}

}  // namespace
}  // namespace ibc::core
