#include "ibc/core/proto_text.h"

#include <gtest/gtest.h>

#include "ibc/core/text.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

TEST(ProtoText, StringsThatAreNotTextAreRepairedDeepInsideAndTheSnapshotReadsBack) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname("node\x1b[2J01");
  auto* port = s.add_devices()->add_ports();
  port->mutable_state()->set_raw("4: \xff\xfe");
  port->add_counters()->set_unavailable_reason("bad value \"12\xc3\"");
  port->add_counters()->set_name("symbol_error");        // already fine: left alone
  s.add_nccl_logs()->set_raw("line one\r\nline two\n");  // CR LF is text

  EXPECT_EQ(sanitizeStringFields(s), 3u);
  EXPECT_EQ(s.node().hostname(), "node?[2J01");
  EXPECT_EQ(s.devices(0).ports(0).state().raw(), "4: ??");
  EXPECT_TRUE(isValidUtf8(s.devices(0).ports(0).counters(0).unavailable_reason()));
  EXPECT_EQ(s.devices(0).ports(0).counters(1).name(), "symbol_error");
  EXPECT_EQ(s.nccl_logs(0).raw(), "line one\r\nline two\n");

  v1::Snapshot back;
  ASSERT_TRUE(back.ParseFromString(s.SerializeAsString()));
  EXPECT_EQ(back.node().hostname(), s.node().hostname());
}

TEST(ProtoText, AValidMessageIsLeftUntouched) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname("gpu-n\xc3\xa9ud-01");  // UTF-8 is text
  s.add_devices()->set_fw_ver("28.39.1002");
  const std::string before = s.SerializeAsString();
  EXPECT_EQ(sanitizeStringFields(s), 0u);
  EXPECT_EQ(s.SerializeAsString(), before);
}

TEST(ProtoText, C1ControlCharactersAreNotPrintable) {
  // U+009B is CSI for terminals that honour 8-bit controls.
  EXPECT_EQ(printable("a\xc2\x9b"
                      "31mb"),
            "a?31mb");
  EXPECT_EQ(sanitizeUtf8("a\xc2\x9b"
                         "31mb\n"),
            "a?31mb\n");
  EXPECT_EQ(printable("\xc2\xa0nbsp"), "\xc2\xa0nbsp");  // U+00A0 is a character
}

}  // namespace
}  // namespace ibc::core
