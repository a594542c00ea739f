#include "ibc/agent/spool.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "ibc/agent/seams.h"
#include "ibc/core/snapshot_file.h"

namespace ibc::agent {

using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr std::string_view kSuffix = ".ibsnap";

bool isSnapshotId(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

Spool::Spool(std::string dir, SpoolLimits limits, const Filesystem& files, FileWriter& writer)
    : dir_(std::move(dir)), limits_(limits), files_(files), writer_(writer) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

core::Status Spool::ensureDir(const std::string& dir) const {
  if (files_.isDirectory(dir)) return {};
  // Snapshots describe the tenant's machines: the spool is private to the agent's user.
  if (auto st = writer_.makeDirectories(dir, 0700); !st.ok()) {
    return Error{st.error().code,
                 "cannot create the spool directory " + dir + ": " + st.error().message};
  }
  return {};
}

Result<std::string> Spool::keep(const ::ibcollect::v1::SignedSnapshot& envelope) {
  const std::string id = core::snapshotId(envelope);
  const std::string path = dir_ + "/" + id + std::string(kSuffix);
  if (files_.exists(path)) return path;
  const std::string bytes = core::encodeSnapshotFile(envelope);
  auto kept = pending();
  if (!kept.ok()) return kept.error();
  uint64_t total = bytes.size();
  for (const auto& e : *kept) total += e.bytes;
  if (kept->size() + 1 > limits_.max_files || total > limits_.max_bytes) {
    return Error{ErrorCode::TooLarge,
                 "spool full: " + dir_ + " holds " + std::to_string(kept->size()) +
                     " snapshot(s), " + mib(total - bytes.size()) + " (limits " +
                     std::to_string(limits_.max_files) + " files, " + mib(limits_.max_bytes) + ")"};
  }
  if (auto st = ensureDir(dir_); !st.ok()) return st.error();
  if (auto st = writer_.writeFileAtomic(path, bytes); !st.ok()) {
    return Error{st.error().code, "cannot keep the snapshot in the spool: " + st.error().message};
  }
  return path;
}

Result<std::string> Spool::keepRejected(const ::ibcollect::v1::SignedSnapshot& envelope,
                                        std::string_view reason) {
  const std::string dir = dir_ + "/rejected";
  if (auto st = ensureDir(dir); !st.ok()) return st.error();
  const std::string id = core::snapshotId(envelope);
  const std::string path = dir + "/" + id + std::string(kSuffix);
  if (auto st = writer_.writeFileAtomic(dir + "/" + id + ".reason", std::string(reason) + "\n");
      !st.ok()) {
    return st.error();
  }
  if (auto st = writer_.writeFileAtomic(path, core::encodeSnapshotFile(envelope)); !st.ok()) {
    return st.error();
  }
  return path;
}

Result<std::vector<SpoolEntry>> Spool::pending() const {
  auto names = files_.listDir(dir_);
  if (!names.ok()) {
    if (names.error().code == ErrorCode::NotFound) return std::vector<SpoolEntry>();
    return Error{names.error().code,
                 "cannot read the spool " + dir_ + ": " + names.error().message};
  }
  std::vector<std::pair<int64_t, SpoolEntry>> found;
  for (const std::string& name : *names) {
    if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) {
      continue;
    }
    const std::string id = name.substr(0, name.size() - kSuffix.size());
    if (!isSnapshotId(id)) continue;
    SpoolEntry entry{id, dir_ + "/" + name, 0};
    auto status = files_.status(entry.path);
    if (!status.ok() || !status->regular) continue;  // gone since the listing, or not a file
    entry.bytes = status->bytes;
    found.emplace_back(status->modified_ns, std::move(entry));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first, a.second.snapshot_id) < std::tie(b.first, b.second.snapshot_id);
  });
  std::vector<SpoolEntry> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

Result<::ibcollect::v1::SignedSnapshot> Spool::read(const SpoolEntry& entry) const {
  bool too_large = false;
  auto bytes = files_.readFile(entry.path, core::kMaxSnapshotFileBytes, &too_large);
  if (!bytes.ok()) return bytes.error();  // names the path and the OS's reason
  if (too_large)
    return Error{ErrorCode::TooLarge, entry.path + ": larger than a snapshot can be (" +
                                          std::to_string(core::kMaxSnapshotFileBytes >> 20) +
                                          " MiB)"};
  auto envelope = core::decodeSnapshotFile(*bytes);
  if (!envelope.ok())
    return Error{ErrorCode::Malformed, entry.path + ": " + envelope.error().message};
  if (core::snapshotId(*envelope) != entry.snapshot_id) {
    return Error{ErrorCode::Malformed, entry.path + ": does not hold the snapshot its name says"};
  }
  return envelope;
}

core::Status Spool::remove(const SpoolEntry& entry) {
  if (auto st = writer_.removeFile(entry.path); !st.ok()) {
    return Error{ErrorCode::Io, "cannot remove " + st.error().message};
  }
  return {};
}

Result<std::string> Spool::reject(const SpoolEntry& entry, std::string_view reason) {
  const std::string dir = dir_ + "/rejected";
  if (auto st = ensureDir(dir); !st.ok()) return st.error();
  if (auto st = writer_.writeFileAtomic(dir + "/" + entry.snapshot_id + ".reason",
                                        std::string(reason) + "\n");
      !st.ok()) {
    return st.error();
  }
  // A rename: works for a file that no longer parses, too.
  const std::string target = dir + "/" + entry.snapshot_id + std::string(kSuffix);
  if (auto st = writer_.renameFile(entry.path, target); !st.ok()) {
    return Error{st.error().code,
                 "cannot move " + entry.path + " to " + dir + ": " + st.error().message};
  }
  return target;
}

}  // namespace ibc::agent
