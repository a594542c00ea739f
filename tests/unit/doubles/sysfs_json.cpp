#include "sysfs_json.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ibc::test {

int materializeSysfsJson(const std::string& json_text, const std::string& dest) {
  google::protobuf::Struct doc;
  const auto st = google::protobuf::util::JsonStringToMessage(json_text, &doc);
  if (!st.ok()) {
    ADD_FAILURE() << "malformed sysfs JSON: " << st.ToString();
    return 0;
  }
  int n = 0;
  for (const auto& [path, value] : doc.fields()) {
    const std::filesystem::path p =
        std::filesystem::path(dest) / std::filesystem::path(path).relative_path();
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    out << value.string_value();
    ++n;
  }
  return n;
}

std::string makeTempDir(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  std::filesystem::path root = std::filesystem::path(base != nullptr ? base : "/tmp") /
                               ("ibc-test-" + std::to_string(::getpid()));
  static const struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{root};
  const std::filesystem::path dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace ibc::test
