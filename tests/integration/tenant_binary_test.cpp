// The tenant program stays light (docs/architecture.md): `ibcollect` must not need libarchive (and
// with it libxml2, ICU), Qt or RocksDB on a training node. Read from the binaries' own ELF dynamic
// sections (DT_NEEDED), not from ldd, which would run the loader. The support program is
// read too: it does need libarchive, which proves the reader sees what is there.
// `ibcollect bundle|case|fetch|host-inspect` runs ibcollect-support git-style, or says which
// package provides it.

#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ibc/os/os.h"

using ::testing::HasSubstr;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

template <typename T>
T at(const std::string& bytes, std::size_t offset) {
  T value{};
  if (offset + sizeof(T) > bytes.size()) throw std::runtime_error("ELF read out of bounds");
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The DT_NEEDED names of a 64-bit ELF file, from its SHT_DYNAMIC section and the string
// table that section links to.
std::vector<std::string> neededLibraries(const std::string& path) {
  const std::string elf = slurp(path);
  const auto header = at<Elf64_Ehdr>(elf, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(path + ": not a 64-bit ELF file");
  std::vector<std::string> needed;
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const auto section = at<Elf64_Shdr>(elf, header.e_shoff + i * header.e_shentsize);
    if (section.sh_type != SHT_DYNAMIC) continue;
    const auto strtab = at<Elf64_Shdr>(elf, header.e_shoff + section.sh_link * header.e_shentsize);
    for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= section.sh_size;
         off += sizeof(Elf64_Dyn)) {
      const auto entry = at<Elf64_Dyn>(elf, section.sh_offset + off);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag != DT_NEEDED) continue;
      const std::size_t name = strtab.sh_offset + entry.d_un.d_val;
      if (name >= elf.size()) throw std::runtime_error(path + ": DT_NEEDED outside the file");
      needed.emplace_back(elf.c_str() + name);
    }
  }
  return needed;
}

bool needsLike(const std::vector<std::string>& needed, const std::string& part) {
  for (const auto& n : needed) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

const std::string kSupport =
    std::filesystem::path(IBC_BINARY).parent_path().string() + "/ibcollect-support";

TEST(TenantBinary, LinksNoLibarchiveQtOrRocksdb) {
  const auto needed = neededLibraries(IBC_BINARY);
  ASSERT_FALSE(needed.empty()) << "no DT_NEEDED read from " << IBC_BINARY;
  ASSERT_TRUE(needsLike(needed, "libc.so")) << "the reader missed libc";
  for (const char* heavy : {"libarchive", "libxml2", "libicu", "libQt", "librocksdb"})
    EXPECT_FALSE(needsLike(needed, heavy)) << IBC_BINARY << " needs " << heavy;
}

// DESIGN.md §10: the collector (a network service) and the console take Debian's security
// updates of OpenSSL and protobuf, so they link the shared libraries; only the portable
// programs embed them (cmake/IbcDependencies.cmake).
TEST(ServiceBinaries, LinkOpenSslAndProtobufShared) {
  for (const std::string& path :
       {std::string(IBC_COLLECTOR_BINARY), std::string(IBC_CONSOLE_BINARY)}) {
    if (path.empty()) continue;  // no console under ThreadSanitizer
    const auto needed = neededLibraries(path);
    for (const std::string lib : {"libssl.so.3", "libcrypto.so.3", "libprotobuf.so.32"}) {
      EXPECT_NE(std::find(needed.begin(), needed.end(), lib), needed.end())
          << path << " does not link " << lib << " dynamically";
    }
  }
}

TEST(TenantBinary, TheSupportProgramHoldsTheArchiveCommands) {
  EXPECT_TRUE(needsLike(neededLibraries(kSupport), "libarchive"))
      << kSupport << " should link libarchive (bundles): is the DT_NEEDED reader wrong?";
}

TEST(TenantBinary, SupportCommandsRunTheSupportProgramGitStyle) {
  ibc::os::ProcessRunner runner;
  auto viaTenant = runner.run({IBC_BINARY, "bundle", "--help"}, std::chrono::seconds(30));
  ASSERT_TRUE(viaTenant.ok());
  EXPECT_EQ(viaTenant->exit_code, 0) << viaTenant->err;
  EXPECT_THAT(viaTenant->out, HasSubstr("export"));
  auto direct = runner.run({kSupport, "bundle", "--help"}, std::chrono::seconds(30));
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(viaTenant->out, direct->out);

  auto tenantHelp = runner.run({IBC_BINARY, "--help"}, std::chrono::seconds(30));
  ASSERT_TRUE(tenantHelp.ok());
  EXPECT_THAT(tenantHelp->out, HasSubstr("Support commands (ibcollect-support):"));
}

TEST(TenantBinary, ASupportCommandWithoutTheSupportProgramNamesThePackage) {
  // The tenant program alone in a directory, as on a node with only the ibcollect package.
  const auto dir =
      std::filesystem::temp_directory_path() / ("ibc-tenant-alone-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(IBC_BINARY, dir / "ibcollect",
                             std::filesystem::copy_options::overwrite_existing);
  ibc::os::ProcessRunner runner;
  auto r = runner.run({(dir / "ibcollect").string(), "case", "list"}, std::chrono::seconds(30));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_THAT(r->err, HasSubstr("provided by the package ibcollect-support"));
  EXPECT_THAT(r->err, HasSubstr("apt-get install ibcollect-support"));
}

}  // namespace
