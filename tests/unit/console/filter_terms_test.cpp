// filter_terms.h: the one filter language of every page, read term by term (good, empty,
// quoted, typo'd and unknown terms) and held against cells' text and numbers.

#include <gtest/gtest.h>

#include <optional>

#include "ibc/console/filter_terms.h"

namespace ibc::console {
namespace {

// The grid's keys, as grid_filter.cpp gives them, trimmed to a few.
FilterKeys gridKeys() {
  FilterKeys k;
  k.text = {QStringLiteral("state"), QStringLiteral("worst"), QStringLiteral("fw")};
  k.numeric = {QStringLiteral("rate"), QStringLiteral("mtu")};
  k.any_numeric_key = true;
  k.severity = true;
  return k;
}

TEST(SplitFilterWords, SpacesSplitWordsExceptInsideDoubleQuotes) {
  EXPECT_EQ(splitFilterWords(QStringLiteral("  gpu1*   state!=ACTIVE ")),
            (QStringList{QStringLiteral("gpu1*"), QStringLiteral("state!=ACTIVE")}));
  EXPECT_EQ(splitFilterWords(QStringLiteral("worst=\"NODE OUTLIER\" rate<200")),
            (QStringList{QStringLiteral("worst=\"NODE OUTLIER\""), QStringLiteral("rate<200")}));
  EXPECT_TRUE(splitFilterWords(QString()).isEmpty());
  EXPECT_TRUE(splitFilterWords(QStringLiteral("   ")).isEmpty());
}

TEST(LeadingNumber, ACellsLeadingNumberIsReadAndWordsHaveNone) {
  EXPECT_EQ(leadingNumber(QStringLiteral("200 Gb/s (4X HDR)")), 200.0);
  EXPECT_EQ(leadingNumber(QStringLiteral(" 97.5")), 97.5);
  EXPECT_EQ(leadingNumber(QStringLiteral("-3 /s")), -3.0);
  EXPECT_EQ(leadingNumber(QStringLiteral("4: ACTIVE")), 4.0);
  EXPECT_FALSE(leadingNumber(QStringLiteral("ACTIVE")).has_value());
  EXPECT_FALSE(leadingNumber(QString()).has_value());
}

TEST(ParseFilter, WordsKeysAndComparisonsAreReadIntoTerms) {
  const ParsedFilter f = parseFilter(
      QStringLiteral("gpu1* State=active rate<200 symbol_error>=10 worst=\"LINK RATE\" fw=20"),
      gridKeys());
  ASSERT_TRUE(f.error.isEmpty()) << f.error.toStdString();
  ASSERT_EQ(f.terms.size(), 6u);
  EXPECT_EQ(f.terms[0].key, QString());
  EXPECT_EQ(f.terms[0].op, QStringLiteral("="));
  EXPECT_EQ(f.terms[0].value, QStringLiteral("gpu1*"));
  EXPECT_EQ(f.terms[1].key, QStringLiteral("state"));  // keys are case-insensitive
  EXPECT_FALSE(f.terms[1].number.has_value());
  EXPECT_EQ(f.terms[2].op, QStringLiteral("<"));
  EXPECT_EQ(f.terms[2].number, 200.0);
  EXPECT_EQ(f.terms[3].key, QStringLiteral("symbol_error"));  // a counter by its name
  EXPECT_EQ(f.terms[3].number, 10.0);
  EXPECT_EQ(f.terms[4].value, QStringLiteral("LINK RATE"));  // quotes taken off
  EXPECT_FALSE(f.terms[5].number.has_value());               // a word key compares words, even "20"
  EXPECT_TRUE(parseFilter(QString(), gridKeys()).terms.empty());
}

TEST(ParseFilter, ASeverityIsItsRankAndAnUnknownOneIsAnError) {
  const ParsedFilter f = parseFilter(QStringLiteral("sev>=Warning"), gridKeys());
  ASSERT_EQ(f.terms.size(), 1u);
  EXPECT_EQ(f.terms[0].key, QStringLiteral("severity"));
  EXPECT_EQ(f.terms[0].number, 2.0);
  const ParsedFilter typo = parseFilter(QStringLiteral("severity>=urgent"), gridKeys());
  EXPECT_TRUE(typo.terms.empty());
  EXPECT_TRUE(typo.error.contains(QStringLiteral("ok, info, warning or critical")))
      << typo.error.toStdString();
}

TEST(ParseFilter, ATermThatCannotBeReadIsAnErrorNamingIt) {
  struct Case {
    const char* text;
    const char* error_part;
  };
  for (const Case& c : {
           Case{"rate<<3", "cannot read \"rate<<3\""}, Case{"rate>fast", "rate is a number"},
           Case{"state<ACTIVE", "compares numbers only"},
           Case{"colour=red", "colour is no column here"}, Case{"=x", "use key=value"},
           Case{"Symbol_Error>3", "no column"},  // a counter's name is lower case
       }) {
    const ParsedFilter f = parseFilter(QString::fromLatin1(c.text), gridKeys());
    EXPECT_TRUE(f.error.contains(QString::fromLatin1(c.error_part)))
        << c.text << ": " << f.error.toStdString();
  }
  // The keys it knows are named when a key is not one of them.
  EXPECT_TRUE(parseFilter(QStringLiteral("colour=red"), gridKeys())
                  .error.contains(QStringLiteral("state, worst, fw, rate, mtu, severity")));
}

TEST(TermHoldsText, TheWholeCellAGlobOrOneOfItsWordsAndNotEqualNegates) {
  const auto term = [](const char* text) {
    return parseFilter(QString::fromLatin1(text), gridKeys()).terms.at(0);
  };
  EXPECT_TRUE(termHoldsText(term("state=active"), QStringLiteral("4: ACTIVE")));
  EXPECT_FALSE(termHoldsText(term("state=active"), QStringLiteral("2: INIT")));
  EXPECT_TRUE(termHoldsText(term("state!=active"), QStringLiteral("2: INIT")));
  EXPECT_TRUE(termHoldsText(term("gpu0?"), QStringLiteral("GPU07")));
  EXPECT_FALSE(termHoldsText(term("gpu0?"), QStringLiteral("gpu107")));
  EXPECT_TRUE(termHoldsText(term("fw=20.31.1014"), QStringLiteral("20.31.1014 (MT_0000000223)")));
  // An empty value matches an empty cell.
  EXPECT_TRUE(termHoldsText(term("worst="), QStringLiteral("  ")));
  EXPECT_FALSE(termHoldsText(term("worst="), QStringLiteral("PORT_DOWN")));
}

TEST(TermHoldsNumber, NumbersCompareAsNumbersAndAMissingOneHoldsOnlyNotEqual) {
  const auto term = [](const char* text) {
    return parseFilter(QString::fromLatin1(text), gridKeys()).terms.at(0);
  };
  EXPECT_TRUE(termHoldsNumber(term("rate<200"), 100.0));
  EXPECT_FALSE(termHoldsNumber(term("rate<200"), 200.0));
  EXPECT_TRUE(termHoldsNumber(term("rate<=200"), 200.0));
  EXPECT_TRUE(termHoldsNumber(term("mtu>=4096"), 4096.0));
  EXPECT_FALSE(termHoldsNumber(term("mtu>4096"), 4096.0));
  EXPECT_TRUE(termHoldsNumber(term("rate=200"), 200.0));
  EXPECT_TRUE(termHoldsNumber(term("rate!=200"), 100.0));
  EXPECT_FALSE(termHoldsNumber(term("rate<200"), std::nullopt));
  EXPECT_TRUE(termHoldsNumber(term("rate!=200"), std::nullopt));
}

}  // namespace
}  // namespace ibc::console
