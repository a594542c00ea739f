#include "ibc/bundle/bundle_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

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
  std::vector<const core::BundleMembers::value_type*> order;
  for (const auto& m : members) order.push_back(&m);
  std::stable_partition(order.begin(), order.end(), [](const auto* m) {
    return m->first == core::kManifestMember || m->first == core::kManifestSignatureMember;
  });
  for (const auto* member : order) {
    const auto& [name, bytes] = *member;
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

namespace {

// The walk of streamBundleArchive over an open archive.
class MemberWalk {
 public:
  MemberWalk(archive* a, const core::BundleLimits& limits) : a_(a), limits_(limits) {}

  // The next regular member's (safe) name in `name`; false at the end. Directories are
  // passed over; everything a bundle never holds is refused.
  core::Result<bool> next(std::string& name, std::uint64_t& size) {
    for (;;) {
      archive_entry* e = nullptr;
      const int rc = archive_read_next_header(a_, &e);
      if (rc == ARCHIVE_EOF) return false;
      if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        return Error{ErrorCode::Malformed, "damaged bundle: " + archiveError(a_)};
      }
      if (++entries_ > limits_.max_members) {
        return Error{ErrorCode::TooLarge, "more than " + std::to_string(limits_.max_members) +
                                              " members: refused (a bundle is bounded)"};
      }
      auto regular = regularMember(e, name);
      if (!regular.ok()) return regular.error();
      if (!*regular) continue;
      size = archive_entry_size_is_set(e) && archive_entry_size(e) >= 0
                 ? static_cast<std::uint64_t>(archive_entry_size(e))
                 : 0;
      if (size > limits_.max_member_bytes) {
        return Error{ErrorCode::TooLarge, shown(name) + " is " + std::to_string(size) +
                                              " bytes, more than a member may be (" +
                                              std::to_string(limits_.max_member_bytes) + ")"};
      }
      return true;
    }
  }

  // The current member's bytes. Counted while inflating: a member or an archive that grows
  // past its bound stops here, whatever its header said.
  core::Result<std::string> read(const std::string& name) {
    std::string data;
    if (auto st = inflate(name, &data); !st.ok()) return st.error();
    return data;
  }

  // Passes over the current member, inflating it (counted) but holding nothing.
  core::Status skip(const std::string& name) { return inflate(name, nullptr); }

 private:
  static std::string shown(const std::string& name) {
    return "member '" + core::printable(name, 120) + "'";
  }

  // Inflates the current member into `into` (nullptr: nowhere), counting every byte.
  core::Status inflate(const std::string& name, std::string* into) {
    char chunk[64 * 1024];
    std::size_t seen = 0;
    for (;;) {
      const la_ssize_t n = archive_read_data(a_, chunk, sizeof chunk);
      if (n == 0) return core::Status();
      if (n < 0) {
        return Error{ErrorCode::Malformed,
                     "damaged bundle at " + shown(name) + ": " + archiveError(a_)};
      }
      if (auto st = count(name, seen, static_cast<std::size_t>(n)); !st.ok()) return st;
      seen += static_cast<std::size_t>(n);
      if (into != nullptr) into->append(chunk, static_cast<std::size_t>(n));
    }
  }

  core::Status count(const std::string& name, std::size_t so_far, std::size_t n) {
    total_ += n;
    if (so_far + n > limits_.max_member_bytes) {
      return Error{ErrorCode::TooLarge, shown(name) + " inflates past " +
                                            std::to_string(limits_.max_member_bytes) +
                                            " bytes: refused (a bundle is bounded)"};
    }
    if (total_ > limits_.max_total_bytes) {
      return Error{ErrorCode::TooLarge, "the members inflate past " +
                                            std::to_string(limits_.max_total_bytes) +
                                            " bytes in all: refused (a bundle is bounded)"};
    }
    return core::Status();
  }

  // True for a regular member (its checked name in `name`), false for a directory to pass
  // over; an error for whatever a bundle never holds.
  core::Result<bool> regularMember(archive_entry* e, std::string& name) {
    const char* raw = archive_entry_pathname(e);
    name = raw != nullptr ? raw : "";
    const std::string what = shown(name);
    if (core::startsWith(name, "./")) name.erase(0, 2);
    const mode_t type = archive_entry_filetype(e);
    if (archive_entry_hardlink(e) != nullptr) {
      return Error{ErrorCode::InvalidArgument, what + " is a hard link: refused"};
    }
    if (type == AE_IFLNK || archive_entry_symlink(e) != nullptr) {
      return Error{ErrorCode::InvalidArgument, what + " is a symbolic link: refused"};
    }
    if (type == AE_IFDIR) {
      if (core::endsWith(name, "/")) name.pop_back();
      if (name.empty() || name == ".") return false;
      if (auto st = core::checkMemberName(name); !st.ok()) {
        return Error{ErrorCode::InvalidArgument, "directory " + st.error().message + ": refused"};
      }
      return false;
    }
    if (type != AE_IFREG) {
      return Error{ErrorCode::InvalidArgument, what + " is " + fileTypeName(type) + ": refused"};
    }
    if (auto st = core::checkMemberName(name); !st.ok()) {
      return Error{ErrorCode::InvalidArgument, st.error().message + ": refused"};
    }
    if (!seen_.insert(name).second) {
      return Error{ErrorCode::InvalidArgument,
                   what + " appears twice: refused (which copy counts would be ambiguous)"};
    }
    return true;
  }

  archive* a_;
  const core::BundleLimits& limits_;
  std::size_t entries_ = 0;
  std::uint64_t total_ = 0;
  std::set<std::string, std::less<>> seen_;
};

// Why a verifying read stopped, for the Unread problem.
std::string whyStopped(const core::BundleVerifier& check, const core::BundleMembers& read,
                       std::uint64_t bound) {
  std::string why = "not read: more than " + std::to_string(bound >> 20) +
                    " MiB of this bundle is vouched for by no verified signature (";
  if (read.count(core::kManifestMember) == 0 || read.count(core::kManifestSignatureMember) == 0) {
    why += "manifest.json and manifest.sig do not come first";
  } else if (!check.manifestVerified()) {
    why += "manifest.json and manifest.sig do not verify";
  } else {
    why += "members manifest.json does not list at their size";
  }
  return why +
         "); the rest is not read: a forged or damaged bundle, or a decompression bomb. Ask "
         "the exporter for a new one";
}

}  // namespace

core::Status streamBundleArchive(
    std::string_view bytes, const core::BundleLimits& limits,
    const std::function<MemberAction(const std::string& name, std::uint64_t size)>& decide,
    const std::function<void(std::string name, std::string bytes)>& take) {
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
  MemberWalk walk(a.get(), limits);
  std::string name;
  std::uint64_t size = 0;
  bool any = false;
  for (;;) {
    auto more = walk.next(name, size);
    if (!more.ok()) return more.error();
    if (!*more) break;
    any = true;
    const MemberAction action = decide(name, size);
    if (action == MemberAction::Stop) return core::Status();
    if (action == MemberAction::Skip) {
      if (auto st = walk.skip(name); !st.ok()) return st;
      continue;
    }
    auto data = walk.read(name);
    if (!data.ok()) return data.error();
    take(std::move(name), std::move(*data));
  }
  if (!any) return Error{ErrorCode::Malformed, "the bundle holds no member"};
  return core::Status();
}

core::Result<core::BundleMembers> readBundleArchive(std::string_view bytes,
                                                    const core::BundleLimits& limits) {
  core::BundleMembers members;
  auto st = streamBundleArchive(
      bytes, limits, [](const std::string&, std::uint64_t) { return MemberAction::Read; },
      [&](std::string name, std::string data) {
        members.emplace(std::move(name), std::move(data));
      });
  if (!st.ok()) return st.error();
  return members;
}

core::Result<VerifiedBundle> readVerifiedBundle(std::string_view bytes,
                                                const core::SignatureVerifier& verifier,
                                                std::chrono::system_clock::time_point at,
                                                const core::BundleLimits& limits) {
  core::BundleVerifier check(verifier, at);
  VerifiedBundle out;
  std::uint64_t unvouched = 0;
  std::string stopped_at;
  auto st = streamBundleArchive(
      bytes, limits,
      [&](const std::string& name, std::uint64_t size) {
        if (check.vouches(name, size)) return MemberAction::Read;
        if (unvouched + size > limits.max_unvouched_bytes) {
          stopped_at = name;
          return MemberAction::Stop;
        }
        unvouched += size;
        return MemberAction::Read;
      },
      [&](std::string name, std::string data) {
        check.add(name, data);
        out.members.emplace(std::move(name), std::move(data));
      });
  if (!st.ok()) return st.error();
  out.check =
      stopped_at.empty()
          ? check.finish()
          : check.finish(stopped_at, whyStopped(check, out.members, limits.max_unvouched_bytes));
  return out;
}

}  // namespace ibc::bundle
