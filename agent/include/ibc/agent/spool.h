#pragma once

// The offline spool (docs/security.md): signed snapshots that could not be delivered yet, kept
// until `ibcollect flush` sends them. One `.ibsnap` file per snapshot, named by its id
// (`<id>.ibsnap`), so keeping the same snapshot twice stores it once and a flush that
// crashed after the collector's acknowledgement re-sends a snapshot the collector
// recognises (uploads are idempotent). Files are written atomically (temp, fsync,
// rename, fsync of the directory).
//
// Snapshots the collector refused for good (bad signature, wrong tenant, ...) move to
// `rejected/` with a `<id>.reason` file beside them: never dropped silently, never retried.
//
// A spool that cannot take more — its limits reached, a full disk, a quota — makes keep()
// fail; the caller must say so loudly. Not thread-safe; concurrent processes only ever
// race to write or delete the same id, which is harmless.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/agent/seams.h"
#include "ibc/core/result.h"
#include "ibcollect/v1/signed.pb.h"

namespace ibc::agent {

inline constexpr std::string_view kDefaultSpoolDir = "/var/spool/ibcollect";

struct SpoolLimits {
  uint64_t max_bytes = uint64_t{1} << 30;  // all pending snapshots together
  std::size_t max_files = 10000;
};

struct SpoolEntry {
  std::string snapshot_id;
  std::string path;
  uint64_t bytes = 0;
};

class Spool {
 public:
  // Every read and listing goes through `files` (the user's files: RootedFilesystem("")),
  // every write, directory, removal and rename through `writer` (ibc/os/os.h; tests inject
  // failures); both must outlive the spool.
  Spool(std::string dir, SpoolLimits limits, const Filesystem& files, FileWriter& writer);

  const std::string& dir() const { return dir_; }

  // Keeps a snapshot until it is delivered; returns its path (the existing one when this
  // snapshot is already kept). Errors: TooLarge (the spool's limits are reached: "spool
  // full"), PermissionDenied / Io (the directory or file cannot be written: no space,
  // quota, permissions); messages name the directory and the reason.
  core::Result<std::string> keep(const ::ibcollect::v1::SignedSnapshot& envelope);

  // Keeps a snapshot the collector refused for good, with the reason, under rejected/.
  // Returns its path. Errors as keep() (limits do not apply).
  core::Result<std::string> keepRejected(const ::ibcollect::v1::SignedSnapshot& envelope,
                                         std::string_view reason);

  // Pending snapshots, oldest first. A missing spool directory is an empty spool.
  // Errors: PermissionDenied / Io.
  core::Result<std::vector<SpoolEntry>> pending() const;

  // Errors: NotFound, Malformed (not a snapshot file: it stays where it is).
  core::Result<::ibcollect::v1::SignedSnapshot> read(const SpoolEntry& entry) const;

  // Forgets a delivered snapshot. Errors: Io (it stays and will be sent again, which the
  // collector recognises).
  core::Status remove(const SpoolEntry& entry);

  // Moves a pending snapshot (readable or not) to rejected/ with the reason.
  core::Result<std::string> reject(const SpoolEntry& entry, std::string_view reason);

 private:
  core::Status ensureDir(const std::string& dir) const;

  std::string dir_;
  SpoolLimits limits_;
  const Filesystem& files_;
  FileWriter& writer_;
};

}  // namespace ibc::agent
