#include "fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace ibc::test
