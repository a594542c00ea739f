// Byte encodings (encoding.cpp): base64 against RFC 4648's test vectors, what a decoder
// refuses, and SHA-256 against FIPS 180-2's examples.

#include "ibc/core/encoding.h"

#include <gtest/gtest.h>

#include <string>

namespace ibc::core {
namespace {

struct Base64Case {
  std::string bytes;
  std::string text;
};

TEST(Base64, EncodesAndDecodesTheRfc4648Vectors) {
  const Base64Case cases[] = {{"", ""},
                              {"f", "Zg=="},
                              {"fo", "Zm8="},
                              {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="},
                              {"fooba", "Zm9vYmE="},
                              {"foobar", "Zm9vYmFy"}};
  for (const auto& c : cases) {
    EXPECT_EQ(base64Encode(c.bytes), c.text) << c.bytes;
    const auto back = base64Decode(c.text);
    ASSERT_TRUE(back.ok()) << c.text << ": " << back.error().message;
    EXPECT_EQ(*back, c.bytes);
  }
}

TEST(Base64, EveryByteValueSurvivesTheRoundTrip) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const auto back = base64Decode(base64Encode(all));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, all);
}

TEST(Base64, TextOutsideTheAlphabetOrOfTheWrongLengthIsMalformed) {
  for (const char* bad : {"Zg=", "Zm9", "Zm9v!A==", "Z===", "=Zm9", "Zg==Zg==", "Zm 9v"}) {
    const auto r = base64Decode(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::Malformed) << bad;
  }
}

TEST(Sha256Hex, MatchesTheFipsExamplesInLowerCaseHex) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace ibc::core
