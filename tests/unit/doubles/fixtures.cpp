#include "fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ibc::test {

std::string fixturePath(const std::string& relative) {
  return std::string(IBC_FIXTURES_DIR) + "/" + relative;
}

std::string readFixture(const std::string& relative) {
  std::ifstream in(fixturePath(relative), std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read fixture " << relative;
    return {};
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> fixtureFiles(const std::string& relative_dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fixturePath(relative_dir), ec)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (!suffix.empty() &&
        (name.size() < suffix.size() ||
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)) {
      continue;
    }
    out.push_back(relative_dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void compareWithGolden(const std::string& name, const std::string& actual) {
  const std::string path = fixturePath("golden/" + name);
  if (const char* u = std::getenv("IBC_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing: run scripts/update-golden.sh";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "differs from " << path << " (if intended: scripts/update-golden.sh, review the diff)";
}

}  // namespace ibc::test
