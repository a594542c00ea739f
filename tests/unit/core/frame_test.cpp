#include "ibc/core/frame.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

std::vector<std::string> drain(FrameDecoder& d) {
  std::vector<std::string> out;
  while (auto f = d.next()) out.push_back(std::move(*f));
  return out;
}

TEST(Frame, HeaderIsBigEndianLengthOfThePayload) {
  const std::string f = encodeFrame("abc");
  ASSERT_EQ(f.size(), 7u);
  EXPECT_EQ(f.substr(0, 4), std::string("\0\0\0\3", 4));
  EXPECT_EQ(f.substr(4), "abc");
  const std::string big = encodeFrame(std::string(0x010203, 'x'));
  EXPECT_EQ(big.substr(0, 4), std::string("\0\x01\x02\x03", 4));
}

TEST(Frame, DecoderReturnsEveryFrameWhateverTheChunking) {
  std::string stream;
  const std::vector<std::string> payloads = {"", "one", std::string(100000, 'z'), "last"};
  for (const auto& p : payloads) appendFrame(stream, p);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{4096}, stream.size()}) {
    FrameDecoder d(1 << 20);
    for (std::size_t i = 0; i < stream.size(); i += chunk) {
      ASSERT_TRUE(d.feed(std::string_view(stream).substr(i, chunk)).ok());
    }
    EXPECT_EQ(drain(d), payloads) << "chunk " << chunk;
    EXPECT_FALSE(d.midFrame());
  }
}

TEST(Frame, OversizedHeaderIsRejectedBeforeAnyPayloadArrives) {
  FrameDecoder d(1000);
  const unsigned char header[4] = {0, 0, 0x03, 0xe9};  // 1001
  auto st = d.feed(std::string_view(reinterpret_cast<const char*>(header), 4));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::TooLarge);
  EXPECT_THAT(st.error().message, HasSubstr("1001"));
  EXPECT_TRUE(d.failed());
  // Stays failed: the stream lost its framing.
  EXPECT_FALSE(d.feed(encodeFrame("ok")).ok());
  EXPECT_FALSE(d.next().has_value());
}

TEST(Frame, ExactlyTheLimitIsAccepted) {
  FrameDecoder d(16);
  ASSERT_TRUE(d.feed(encodeFrame(std::string(16, 'a'))).ok());
  auto f = d.next();
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->size(), 16u);
}

TEST(Frame, TruncatedStreamIsMidFrame) {
  const std::string f = encodeFrame("payload");
  FrameDecoder header_only(100);
  ASSERT_TRUE(header_only.feed(f.substr(0, 2)).ok());
  EXPECT_TRUE(header_only.midFrame());
  FrameDecoder body_short(100);
  ASSERT_TRUE(body_short.feed(f.substr(0, f.size() - 1)).ok());
  EXPECT_TRUE(body_short.midFrame());
  EXPECT_FALSE(body_short.next().has_value());
}

TEST(Frame, DecodeHeaderNamesTheLimit) {
  const unsigned char max[4] = {0xff, 0xff, 0xff, 0xff};
  auto r = decodeFrameHeader(max, kDefaultMaxFrameBytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::TooLarge);
  const unsigned char zero[4] = {0, 0, 0, 0};
  auto z = decodeFrameHeader(zero, 0);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(*z, 0u);
}

TEST(Frame, GarbageNeverCrashesAndNeverYieldsMoreThanItHolds) {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string garbage(rng() % 300, '\0');
    for (auto& c : garbage) c = static_cast<char>(rng());
    FrameDecoder d(128);
    (void)d.feed(garbage);
    std::size_t total = 0;
    for (const auto& f : drain(d)) total += f.size() + kFrameHeaderBytes;
    EXPECT_LE(total, garbage.size());
  }
}

}  // namespace
}  // namespace ibc::core
