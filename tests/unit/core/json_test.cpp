#include "ibc/core/json.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/signed.pb.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

nlohmann::json viaProtobuf(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out, opts).ok());
  return nlohmann::json::parse(out);
}

v1::Report richReport() {
  v1::Report r;
  auto* f = r.add_findings();
  f->set_code("PHY_ERRORS");
  f->set_severity("critical");
  f->set_node("node1");
  f->set_device("mlx5_0");
  f->set_port(1);
  f->set_summary(
      "quotes \" and backslash \\ and unicode \xc3\xa9 and a tab\t"
      " and control \x01\x1f\b\f\r\n characters");
  f->add_evidence("symbol_error = 12");
  auto* n = r.add_nodes();
  n->set_node("node1");
  n->set_collected_at_unix_ms(-1234567890123);
  auto* s = n->mutable_snapshot();
  s->set_schema_version(1);
  auto* d = s->add_devices();
  d->set_name("mlx5_0");
  auto* p = d->add_ports();
  p->set_port(1);
  p->set_rate_gbps(53.125);
  p->set_lid(0);  // proto3 optional, set to its default: printed
  auto* c = p->add_counters();
  c->set_name("port_xmit_data");
  c->set_value(std::numeric_limits<uint64_t>::max());
  c->set_width_bits(64);
  p->add_counters()->set_name("empty");
  auto* e = s->add_nccl_logs()->mutable_parsed()->add_events();
  e->set_kind(v1::NcclEvent::IB_COMPLETION_ERROR);
  e->set_status(-1);
  s->mutable_node()->set_virtual_machine(true);
  return r;
}

TEST(Json, EqualsProtobufsOwnJsonMappingOnARichReport) {
  const auto r = richReport();
  EXPECT_EQ(nlohmann::json::parse(messageToJson(r)), viaProtobuf(r));
}

TEST(Json, EqualsProtobufsOwnJsonMappingOnEmptyMessages) {
  EXPECT_EQ(nlohmann::json::parse(messageToJson(v1::Report())), viaProtobuf(v1::Report()));
  EXPECT_EQ(nlohmann::json::parse(messageToJson(v1::Snapshot())), viaProtobuf(v1::Snapshot()));
}

TEST(Json, BytesAreBase64AndMatchProtobuf) {
  v1::SignedSnapshot env;
  for (const char* s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x10"}) {
    env.set_snapshot(std::string(s, std::char_traits<char>::length(s) + (s[0] == '\xff' ? 2 : 0)));
    env.add_certificate_chain(env.snapshot());
    EXPECT_EQ(nlohmann::json::parse(messageToJson(env)), viaProtobuf(env));
  }
}

TEST(Json, FindingHasEveryKeyOfTheDesignShape) {
  const auto doc = nlohmann::json::parse(messageToJson(richReport()));
  const auto& f = doc["findings"][0];
  for (const char* key :
       {"code", "severity", "node", "device", "port", "summary", "evidence", "action"}) {
    EXPECT_TRUE(f.contains(key)) << key;
  }
  EXPECT_EQ(f["port"], 1);
  EXPECT_EQ(doc["nodes"][0]["snapshot"]["devices"][0]["ports"][0]["counters"][0]["value"],
            "18446744073709551615");
}

TEST(Json, InvalidUtf8IsReplacedSoTheDocumentStillParses) {
  v1::Finding f;
  f.set_summary(std::string("bad \xff\xfe bytes"));
  f.add_evidence(std::string("truncated \xc3"));
  const std::string out = messageToJson(f, -1);
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(out)) << out;
  EXPECT_EQ(doc["summary"], "bad ?? bytes");
  EXPECT_EQ(doc["evidence"][0], "truncated ?");
}

TEST(Json, CompactAndIndentedOutputHoldTheSameDocument) {
  const auto r = richReport();
  const std::string compact = messageToJson(r, -1);
  const std::string indented = messageToJson(r, 2);
  EXPECT_THAT(compact, Not(HasSubstr("\n")));
  EXPECT_THAT(indented, HasSubstr("\n  \"findings\": ["));
  EXPECT_EQ(nlohmann::json::parse(compact), nlohmann::json::parse(indented));
}

TEST(Json, IndentedOutputHasOneMemberPerLineAndEmptyContainersInline) {
  v1::Finding f;
  f.set_code("LINK_DOWN");
  f.set_port(1);
  f.add_evidence("state: 1: DOWN");
  const std::string out = messageToJson(f, 2);
  EXPECT_TRUE(out.starts_with("{\n  \"code\": \"LINK_DOWN\",\n")) << out;
  EXPECT_THAT(out, HasSubstr(",\n  \"port\": 1,\n"));
  EXPECT_THAT(out, HasSubstr("\"evidence\": [\n    \"state: 1: DOWN\"\n  ]"));
  EXPECT_EQ(out.back(), '}');
  f.clear_evidence();
  EXPECT_NE(messageToJson(f, 2).find("\"evidence\": []"), std::string::npos);
  EXPECT_EQ(messageToJson(v1::Report(), -1).find(' '), std::string::npos);
}

TEST(Json, NonFiniteDoublesAreStringsAsInTheMapping) {
  v1::Report r;
  auto* p = r.add_nodes()->mutable_snapshot()->add_devices()->add_ports();
  p->set_rate_gbps(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(nlohmann::json::parse(messageToJson(r)), viaProtobuf(r));
  p->set_rate_gbps(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(nlohmann::json::parse(messageToJson(r)), viaProtobuf(r));
}

}  // namespace
}  // namespace ibc::core
