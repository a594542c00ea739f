#include "ibc/bundle/bundle_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "ibc/core/text.h"

namespace ibc::bundle {

namespace {

using core::Error;
using core::ErrorCode;

struct FreeRead {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct FreeWrite {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct FreeEntry {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

std::string archiveError(archive* a) {
  const char* s = archive_error_string(a);
  return s != nullptr ? core::printable(s, 300) : std::string("unknown libarchive error");
}

la_ssize_t appendToString(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

std::string fileTypeName(mode_t type) {
  switch (type) {
    case AE_IFLNK: return "a symbolic link";
    case AE_IFCHR: return "a character device";
    case AE_IFBLK: return "a block device";
    case AE_IFIFO: return "a fifo";
    case AE_IFSOCK: return "a socket";
    case AE_IFDIR: return "a directory";
    default: return "not a regular file";
  }
}

}  // namespace

core::Result<std::string> writeBundleArchive(const core::BundleMembers& members,
                                             int64_t mtime_unix_s) {
  std::string out;
  std::unique_ptr<archive, FreeWrite> a(archive_write_new());
  if (!a) return Error{ErrorCode::Io, "archive_write_new failed"};
  if (archive_write_add_filter_zstd(a.get()) != ARCHIVE_OK ||
      archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(a.get(), 1) != ARCHIVE_OK ||
      archive_write_open(a.get(), &out, nullptr, appendToString, nullptr) != ARCHIVE_OK) {
    return Error{ErrorCode::Io, "cannot start the archive: " + archiveError(a.get())};
  }
  for (const auto& [name, bytes] : members) {
    if (auto st = core::checkMemberName(name); !st.ok()) return st.error();
    std::unique_ptr<archive_entry, FreeEntry> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_mtime(e.get(), mtime_unix_s, 0);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
      return Error{ErrorCode::Io, name + ": " + archiveError(a.get())};
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
      const la_ssize_t n = archive_write_data(a.get(), bytes.data() + done, bytes.size() - done);
      if (n <= 0) return Error{ErrorCode::Io, name + ": " + archiveError(a.get())};
      done += static_cast<std::size_t>(n);
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return Error{ErrorCode::Io, "cannot finish the archive: " + archiveError(a.get())};
  }
  return out;
}

core::Result<core::BundleMembers> readBundleArchive(std::string_view bytes,
                                                    const core::BundleLimits& limits) {
  if (bytes.size() > kMaxBundleFileBytes) {
    return Error{ErrorCode::TooLarge, "the bundle file is larger than 1 GiB"};
  }
  std::unique_ptr<archive, FreeRead> a(archive_read_new());
  if (!a) return Error{ErrorCode::Io, "archive_read_new failed"};
  // Exactly what a bundle is: tar, zstd (or none). No other formats or filters, no external
  // decompressor programs.
  archive_read_support_filter_zstd(a.get());
  archive_read_support_filter_none(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return Error{ErrorCode::Malformed,
                 "not a bundle (a tar archive compressed with zstd): " + archiveError(a.get())};
  }
  core::BundleMembers members;
  std::uint64_t total = 0;
  std::size_t entries = 0;
  std::string buffer;
  for (;;) {
    archive_entry* e = nullptr;
    const int rc = archive_read_next_header(a.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      return Error{ErrorCode::Malformed, "damaged bundle: " + archiveError(a.get())};
    }
    if (++entries > limits.max_members) {
      return Error{ErrorCode::TooLarge, "more than " + std::to_string(limits.max_members) +
                                            " members: refused (a bundle is bounded)"};
    }
    const char* raw = archive_entry_pathname(e);
    std::string name = raw != nullptr ? raw : "";
    const std::string shown = "member '" + core::printable(name, 120) + "'";
    if (core::startsWith(name, "./")) name.erase(0, 2);
    const mode_t type = archive_entry_filetype(e);
    if (archive_entry_hardlink(e) != nullptr) {
      return Error{ErrorCode::InvalidArgument, shown + " is a hard link: refused"};
    }
    if (type == AE_IFLNK || archive_entry_symlink(e) != nullptr) {
      return Error{ErrorCode::InvalidArgument, shown + " is a symbolic link: refused"};
    }
    if (type == AE_IFDIR) {
      if (core::endsWith(name, "/")) name.pop_back();
      if (name.empty() || name == ".") continue;
      if (auto st = core::checkMemberName(name); !st.ok()) {
        return Error{ErrorCode::InvalidArgument, "directory " + st.error().message + ": refused"};
      }
      continue;
    }
    if (type != AE_IFREG) {
      return Error{ErrorCode::InvalidArgument, shown + " is " + fileTypeName(type) + ": refused"};
    }
    if (auto st = core::checkMemberName(name); !st.ok()) {
      return Error{ErrorCode::InvalidArgument, st.error().message + ": refused"};
    }
    if (members.count(name) != 0) {
      return Error{ErrorCode::InvalidArgument,
                   shown + " appears twice: refused (which copy counts would be ambiguous)"};
    }
    if (archive_entry_size_is_set(e) && archive_entry_size(e) >= 0 &&
        static_cast<std::uint64_t>(archive_entry_size(e)) > limits.max_member_bytes) {
      return Error{ErrorCode::TooLarge, shown + " is " + std::to_string(archive_entry_size(e)) +
                                            " bytes, more than a member may be (" +
                                            std::to_string(limits.max_member_bytes) + ")"};
    }
    // Counted while inflating: a member or an archive that grows past its bound stops here,
    // whatever its header said.
    std::string data;
    char chunk[64 * 1024];
    for (;;) {
      const la_ssize_t n = archive_read_data(a.get(), chunk, sizeof chunk);
      if (n == 0) break;
      if (n < 0) {
        return Error{ErrorCode::Malformed,
                     "damaged bundle at " + shown + ": " + archiveError(a.get())};
      }
      total += static_cast<std::uint64_t>(n);
      if (data.size() + static_cast<std::size_t>(n) > limits.max_member_bytes) {
        return Error{ErrorCode::TooLarge, shown + " inflates past " +
                                              std::to_string(limits.max_member_bytes) +
                                              " bytes: refused (a bundle is bounded)"};
      }
      if (total > limits.max_total_bytes) {
        return Error{ErrorCode::TooLarge, "the members inflate past " +
                                              std::to_string(limits.max_total_bytes) +
                                              " bytes in all: refused (a bundle is bounded)"};
      }
      data.append(chunk, static_cast<std::size_t>(n));
    }
    members.emplace(std::move(name), std::move(data));
  }
  if (members.empty()) return Error{ErrorCode::Malformed, "the bundle holds no member"};
  return members;
}

}  // namespace ibc::bundle
