#pragma once

// The `.ibbundle` archive (docs/formats.md): a tar archive (POSIX pax) compressed with zstd,
// written and read with libarchive, around the members of core/bundle.h (library ibc_bundle:
// the agent's `bundle` commands and the console's escalate page write through it). In memory: bytes
// in, members out (the CLI reads and writes the file).

#include <cstdint>
#include <string>
#include <string_view>

#include "ibc/core/bundle.h"
#include "ibc/core/result.h"

namespace ibc::bundle {

// Largest .ibbundle file read (compressed). Decompressed bytes are bounded by BundleLimits.
inline constexpr std::size_t kMaxBundleFileBytes = 1u << 30;

// Every member as a regular file (mode 0644, owner 0:0, the given mtime), in name order.
// Errors: InvalidArgument (an unsafe member name), Io (libarchive failed).
core::Result<std::string> writeBundleArchive(const core::BundleMembers& members,
                                             int64_t mtime_unix_s = 0);

// Reads every member, refusing what a bundle never holds, with the reason and the member:
// absolute or ".." paths and other unsafe names (checkMemberName; one leading "./" is
// accepted), symbolic and hard links, device files, fifos and sockets, a name seen twice,
// more than `limits.max_members` members, a member or a total past the byte bounds —
// counted while decompressing, so a zstd bomb stops at the bound. Directory entries are
// skipped. Only tar compressed with zstd is read (plain tar too, for hand-made bundles).
// Errors: InvalidArgument (hostile or unsafe content), TooLarge (a bound), Malformed (not
// a tar.zst, truncated, corrupt).
core::Result<core::BundleMembers> readBundleArchive(std::string_view bytes,
                                                    const core::BundleLimits& limits = {});

}  // namespace ibc::bundle
