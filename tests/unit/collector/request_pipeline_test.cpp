#include "net/request_pipeline.h"

#include <gtest/gtest.h>

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;

v1::CollectorResponse ack(uint64_t request_id) {
  v1::CollectorResponse r;
  r.set_request_id(request_id);
  r.mutable_ack()->set_snapshot_id("id" + std::to_string(request_id));
  return r;
}

v1::CollectorResponse rejection(uint64_t request_id, v1::RejectReason reason) {
  v1::CollectorResponse r;
  r.set_request_id(request_id);
  r.mutable_rejection()->set_reason(reason);
  return r;
}

// Takes and "writes" every answer that may leave now; their request ids in order.
std::vector<uint64_t> drain(RequestPipeline& p) {
  std::vector<uint64_t> out;
  while (auto a = p.next()) {
    out.push_back(a->response.request_id());
    p.written();
  }
  return out;
}

// Three requests open in a window of eight, numbered 1, 2 and 3 by the connection.
struct RequestPipelineOfThree : ::testing::Test {
  RequestPipeline p{8};
  const uint64_t a = p.open();
  const uint64_t b = p.open();
  const uint64_t c = p.open();
};

TEST_F(RequestPipelineOfThree, AnswersLeaveInRequestOrderWhateverOrderTheyArriveIn) {
  p.complete(c, ack(3));
  p.complete(b, rejection(2, v1::REJECT_REASON_BAD_SIGNATURE));
  EXPECT_TRUE(drain(p).empty());  // the first answer has not arrived: nothing leaves
  p.complete(a, ack(1));
  EXPECT_EQ(drain(p), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(p.idle());
  EXPECT_FALSE(p.ended());  // a rejected upload does not end the connection
}

TEST(RequestPipeline, TheWindowCountsARequestUntilItsAnswerIsWritten) {
  RequestPipeline p(2);
  EXPECT_TRUE(p.hasRoom());
  const uint64_t a = p.open();
  p.open();
  EXPECT_FALSE(p.hasRoom());
  p.complete(a, ack(1));
  auto first = p.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(p.hasRoom()) << "the answer being written still holds its place";
  EXPECT_FALSE(p.next().has_value()) << "one answer is written at a time";
  p.written();
  EXPECT_TRUE(p.hasRoom());
  EXPECT_EQ(p.unanswered(), 1u);
}

TEST(RequestPipeline, AWindowOfZeroIsOneRequestAtATime) {
  RequestPipeline p(0);
  EXPECT_EQ(p.window(), 1u);
  p.open();
  EXPECT_FALSE(p.hasRoom());
}

TEST(RequestPipeline, ARefusalIsAnsweredAfterEverythingBeforeItAndEndsTheConnection) {
  RequestPipeline p(8);
  const uint64_t a = p.open();
  p.refuse(rejection(0, v1::REJECT_REASON_FRAME_TOO_LARGE));
  EXPECT_FALSE(p.hasRoom()) << "nothing is read after a refused frame";
  EXPECT_FALSE(p.next().has_value());
  p.complete(a, ack(1));
  auto first = p.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->last);
  p.written();
  auto refusal = p.next();
  ASSERT_TRUE(refusal.has_value());
  EXPECT_TRUE(refusal->last);
  EXPECT_EQ(refusal->response.rejection().reason(), v1::REJECT_REASON_FRAME_TOO_LARGE);
  p.written();
  EXPECT_TRUE(p.ended());
  EXPECT_TRUE(p.idle());
}

TEST_F(RequestPipelineOfThree, AfterAFrameThatIsNotARequestNothingLaterIsAnswered) {
  p.complete(c, ack(3));
  p.complete(b, rejection(0, v1::REJECT_REASON_MALFORMED_REQUEST));  // b was garbage
  p.complete(a, ack(1));
  auto first = p.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->response.request_id(), 1u);
  p.written();
  auto malformed = p.next();
  ASSERT_TRUE(malformed.has_value());
  EXPECT_TRUE(malformed->last);
  p.written();
  EXPECT_TRUE(p.ended());
  EXPECT_FALSE(p.next().has_value()) << "request 3 was answered by the service, never sent";
  EXPECT_TRUE(p.idle());
  EXPECT_FALSE(p.hasRoom());
  p.complete(c, ack(3));  // late answers of an ended pipeline are ignored
  EXPECT_FALSE(p.next().has_value());
}

TEST(RequestPipeline, OnlyAMalformedRequestRejectionEndsTheConnection) {
  EXPECT_TRUE(endsConnection(rejection(0, v1::REJECT_REASON_MALFORMED_REQUEST)));
  EXPECT_FALSE(endsConnection(rejection(4, v1::REJECT_REASON_BAD_SIGNATURE)));
  EXPECT_FALSE(endsConnection(rejection(4, v1::REJECT_REASON_OVERLOADED)));
  EXPECT_FALSE(endsConnection(ack(4)));
}

TEST(RequestPipeline, UnknownOrRepeatedCompletionsChangeNothing) {
  RequestPipeline p(4);
  const uint64_t a = p.open();
  p.complete(a + 7, ack(9));
  p.complete(a, ack(1));
  p.complete(a, ack(2));
  EXPECT_EQ(drain(p), (std::vector<uint64_t>{1}));
}

}  // namespace
}  // namespace ibc::collector
