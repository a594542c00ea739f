// Error codes as reports name them (result.cpp errorCodeName) and the Result/Status values
// every fallible function returns.

#include "ibc/core/result.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ibc::core {
namespace {

TEST(ErrorCodeName, OsErrorsReadAsTheirErrnoNames) {
  EXPECT_EQ(errorCodeName(ErrorCode::NotFound), "ENOENT");
  EXPECT_EQ(errorCodeName(ErrorCode::PermissionDenied), "EACCES");
  EXPECT_EQ(errorCodeName(ErrorCode::InvalidArgument), "EINVAL");
  EXPECT_EQ(errorCodeName(ErrorCode::Io), "EIO");
}

TEST(ErrorCodeName, OtherCodesReadAsWordsAndEveryNameIsDistinct) {
  EXPECT_EQ(errorCodeName(ErrorCode::Malformed), "malformed");
  EXPECT_EQ(errorCodeName(ErrorCode::TooLarge), "too large");
  EXPECT_EQ(errorCodeName(ErrorCode::Timeout), "timeout");
  EXPECT_EQ(errorCodeName(ErrorCode::Unavailable), "unavailable");
  EXPECT_EQ(errorCodeName(ErrorCode::Unsupported), "unsupported");
  const std::set<std::string_view> names{
      errorCodeName(ErrorCode::NotFound),        errorCodeName(ErrorCode::PermissionDenied),
      errorCodeName(ErrorCode::InvalidArgument), errorCodeName(ErrorCode::Malformed),
      errorCodeName(ErrorCode::TooLarge),        errorCodeName(ErrorCode::Io),
      errorCodeName(ErrorCode::Timeout),         errorCodeName(ErrorCode::Unavailable),
      errorCodeName(ErrorCode::Unsupported)};
  EXPECT_EQ(names.size(), 9u);
}

TEST(ResultValue, HoldsEitherAValueOrTheErrorWithItsMessage) {
  const Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  const Result<int> bad = Error{ErrorCode::NotFound, "no such file"};
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::NotFound);
  EXPECT_EQ(bad.error().message, "no such file");
  EXPECT_EQ(bad.valueOr(7), 7);
  EXPECT_EQ(good.valueOr(7), 42);
}

TEST(StatusValue, DefaultIsSuccessAndAnErrorKeepsItsCode) {
  EXPECT_TRUE(Status().ok());
  const Status failed = Error{ErrorCode::Timeout, "took too long"};
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::Timeout);
}

}  // namespace
}  // namespace ibc::core
