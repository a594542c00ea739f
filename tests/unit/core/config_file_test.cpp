// The agent's and the collector's config files (config_file.cpp): the forms accepted, and
// every refusal named FILE:LINE with the key and what would be valid.

#include "ibc/core/config_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

const std::vector<std::string> kKeys{"collector", "ca", "listen", "spool-dir"};

TEST(ConfigFile, EveryAcceptedFormGivesTheKeyTheValueAndItsLine) {
  const auto r = parseConfigFile(
      "# agent config\n"
      "\n"
      "collector = collector.example:7443   # the primary\n"
      "ca: \"/etc/ibcollect/ca bundle.pem\"\n"
      "; a comment in ini style\n"
      "--listen = 0.0.0.0:7443\n"
      "spool-dir = /var/spool/ibc#1\n",
      "agent.conf", kKeys);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].key, "collector");
  EXPECT_EQ((*r)[0].value, "collector.example:7443");
  EXPECT_EQ((*r)[0].line, 3);
  EXPECT_EQ((*r)[1].key, "ca");
  EXPECT_EQ((*r)[1].value, "/etc/ibcollect/ca bundle.pem");
  EXPECT_EQ((*r)[1].line, 4);
  EXPECT_EQ((*r)[2].key, "listen");
  EXPECT_EQ((*r)[2].value, "0.0.0.0:7443");
  EXPECT_EQ((*r)[3].value, "/var/spool/ibc#1");  // a '#' inside a path is no comment
  EXPECT_EQ((*r)[3].line, 7);
}

TEST(ConfigFile, EmptyAndCommentOnlyTextGivesNoEntries) {
  for (const char* text : {"", "\n\n", "# only a comment\n; and another"}) {
    const auto r = parseConfigFile(text, "empty.conf", kKeys);
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_TRUE(r->empty()) << text;
  }
}

struct Refusal {
  const char* text;
  const char* says;
};

TEST(ConfigFile, EachMistakeIsRefusedWithFileLineAndWhatWouldBeValid) {
  const Refusal cases[] = {
      {"collector = a\nport = 1\n",
       "c.conf:2: unknown key 'port' (valid keys: ca, collector, listen, spool-dir)"},
      {"[agent]\n", "c.conf:1: sections are not used here ([agent])"},
      {"collector a\n", "c.conf:1: expected `key = value`, got 'collector a'"},
      {"ca = 'x\n", "c.conf:1: ca: the quoted value is not closed (add ')"},
      {"ca = \"x\" y\n", "c.conf:1: ca: unexpected text after the quoted value: 'y'"},
      {"ca = x\n\nca = y\n", "c.conf:3: ca is given twice; keep one line for it"},
  };
  for (const auto& c : cases) {
    const auto r = parseConfigFile(c.text, "c.conf", kKeys);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument) << c.text;
    EXPECT_THAT(r.error().message, HasSubstr(c.says)) << c.text;
  }
}

}  // namespace
}  // namespace ibc::core
