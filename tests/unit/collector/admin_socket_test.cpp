// The collector's local admin channel (net/admin_socket.cpp): a Unix socket in a temp dir,
// one request line and one answer line per connection, through the real adminRequest().

#include "ibc/collector/net/admin_socket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "collector_test_support.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::unique_ptr<AdminSocket> startSocket(const std::string& path, AdminSocket::Handler handler,
                                         EventLog& log) {
  auto started = AdminSocket::start(path, std::move(handler), log);
  EXPECT_TRUE(started.ok()) << (started.ok() ? "" : started.error().message);
  return started.ok() ? std::move(*started) : nullptr;
}

TEST(AdminSocket, EachRequestLineIsAnsweredWithTheHandlersLine) {
  test::TempDir dir;
  test::CapturedLog log;
  std::vector<std::string> seen;
  const std::string path = dir.path() + "/admin.sock";
  auto socket = startSocket(
      path,
      [&seen](const std::string& request) {
        seen.push_back(request);
        return "ok bytes=" + std::to_string(request.size());
      },
      log);
  ASSERT_NE(socket, nullptr);
  auto first = adminRequest(path, "checkpoint /srv/backup", seconds(30));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, "ok bytes=22");
  auto second = adminRequest(path, "status", seconds(30));
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(*second, "ok bytes=6");
  // Served one at a time on the socket's thread: both were handled before their answers.
  EXPECT_EQ(seen, (std::vector<std::string>{"checkpoint /srv/backup", "status"}));
}

TEST(AdminSocket, TheSocketIsOnlyItsOwnersAndGoesAwayWithIt) {
  test::TempDir dir;
  test::CapturedLog log;
  const std::string path = dir.path() + "/admin.sock";
  {
    auto socket = startSocket(
        path, [](const std::string&) { return "ok"; }, log);
    ASSERT_NE(socket, nullptr);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  auto none = adminRequest(path, "checkpoint /x", seconds(30));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::NotFound);
  EXPECT_THAT(none.error().message, HasSubstr("no collector listens on " + path));
}

TEST(AdminSocket, ASocketFileNobodyListensOnIsNotFoundAndIsReplacedByTheNextStart) {
  test::TempDir dir;
  test::CapturedLog log;
  const std::string path = dir.path() + "/admin.sock";
  {
    // What a killed collector leaves: a bound socket file, nothing listening.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    ::close(fd);
  }
  auto stale = adminRequest(path, "checkpoint /x", seconds(30));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::NotFound);

  auto socket = startSocket(
      path, [](const std::string&) { return "ok fresh"; }, log);
  ASSERT_NE(socket, nullptr);
  auto answer = adminRequest(path, "checkpoint /x", seconds(30));
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(*answer, "ok fresh");
}

TEST(AdminSocket, APathTooLongForASocketAddressIsRefusedOnBothSides) {
  test::TempDir dir;
  test::CapturedLog log;
  const std::string path = dir.path() + "/" + std::string(120, 'a') + ".sock";
  auto started = AdminSocket::start(
      path, [](const std::string&) { return "ok"; }, log);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.error().code, ErrorCode::InvalidArgument);
  EXPECT_THAT(started.error().message, HasSubstr("admin socket path longer than 107 bytes"));
  auto asked = adminRequest(path, "checkpoint /x", seconds(30));
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.error().code, ErrorCode::NotFound);
}

TEST(AdminSocket, ARequestLineOverFourKibibytesIsAnsweredWithAnErrorAndNotHandled) {
  test::TempDir dir;
  test::CapturedLog log;
  const std::string path = dir.path() + "/admin.sock";
  std::atomic<int> handled{0};
  auto socket = startSocket(
      path,
      [&handled](const std::string&) {
        ++handled;
        return "ok";
      },
      log);
  ASSERT_NE(socket, nullptr);
  auto answer = adminRequest(path, "checkpoint /" + std::string(5000, 'x'), seconds(30));
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(*answer, "error no request line within 5 s (at most 4 KiB)");
  EXPECT_EQ(handled, 0);
  // A line of exactly 4 KiB is still a request.
  auto longest = adminRequest(path, std::string(4096, 'y'), seconds(30));
  ASSERT_TRUE(longest.ok()) << longest.error().message;
  EXPECT_EQ(*longest, "ok");
  EXPECT_EQ(handled, 1);
}

TEST(AdminSocket, AnAnswerThatDoesNotComeWithinTheTimeoutIsATimeout) {
  test::TempDir dir;
  test::CapturedLog log;
  const std::string path = dir.path() + "/admin.sock";
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto socket = startSocket(
      path,
      [released](const std::string&) {
        released.wait();
        return "ok late";
      },
      log);
  ASSERT_NE(socket, nullptr);
  auto answer = adminRequest(path, "checkpoint /x", milliseconds(100));
  release.set_value();
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::Timeout);
  EXPECT_THAT(answer.error().message, HasSubstr("no answer from the collector on " + path));
  // The socket serves the next request once the slow one is done.
  auto next = adminRequest(path, "checkpoint /y", seconds(30));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(*next, "ok late");
}

}  // namespace
}  // namespace ibc::collector
