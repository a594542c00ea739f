#include "bundle_bomb.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ibc::test {

namespace {

struct FreeWrite {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct FreeEntry {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

void check(archive* a, int rc, const char* what) {
  if (rc != ARCHIVE_OK) {
    const char* why = archive_error_string(a);
    throw std::runtime_error(std::string(what) + ": " + (why != nullptr ? why : "libarchive"));
  }
}

void writeMember(archive* a, const std::string& name, std::uint64_t size,
                 const std::string* bytes) {
  std::unique_ptr<archive_entry, FreeEntry> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(size));
  archive_entry_set_filetype(e.get(), AE_IFREG);
  archive_entry_set_perm(e.get(), 0644);
  check(a, archive_write_header(a, e.get()), "header");
  if (bytes != nullptr) {
    archive_write_data(a, bytes->data(), bytes->size());
    return;
  }
  static const std::vector<char> zeros(1u << 20, 0);
  for (std::uint64_t done = 0; done < size;) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), size - done));
    if (archive_write_data(a, zeros.data(), n) < 0) check(a, ARCHIVE_FATAL, "data");
    done += n;
  }
}

}  // namespace

std::uint64_t writeZeroBomb(const std::string& path, const core::BundleMembers& head, int members,
                            std::uint64_t member_bytes) {
  std::unique_ptr<archive, FreeWrite> a(archive_write_new());
  check(a.get(), archive_write_add_filter_zstd(a.get()), "zstd");
  check(a.get(), archive_write_set_format_pax_restricted(a.get()), "pax");
  check(a.get(), archive_write_open_filename(a.get(), path.c_str()), "open");
  for (const auto& [name, bytes] : head) writeMember(a.get(), name, bytes.size(), &bytes);
  for (int i = 0; i < members; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "snapshots/bomb-%04d.ibsnap", i);
    writeMember(a.get(), name, member_bytes, nullptr);
  }
  check(a.get(), archive_write_close(a.get()), "close");
  return std::filesystem::file_size(path);
}

}  // namespace ibc::test
