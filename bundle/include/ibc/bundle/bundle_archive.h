#pragma once

// The `.ibbundle` archive (docs/formats.md): a tar archive (POSIX pax) compressed with zstd,
// written and read with libarchive, around the members of core/bundle.h (library ibc_bundle:
// the agent's `bundle` commands and the console's escalate page write through it). In memory: bytes
// in, members out (the CLI reads and writes the file).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ibc/core/bundle.h"
#include "ibc/core/result.h"

namespace ibc::bundle {

// Largest .ibbundle file read (compressed). Decompressed bytes are bounded by BundleLimits.
inline constexpr std::size_t kMaxBundleFileBytes = 1u << 30;

// Every member as a regular file (mode 0644, owner 0:0, the given mtime): manifest.json and
// manifest.sig first (a reader then knows what is vouched for before the rest inflates), the
// others in name order.
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

// What a streaming reader does with the member it has just met, before inflating it.
enum class MemberAction { Read, Skip, Stop };

// The members one at a time, as readBundleArchive refuses and bounds them: `decide(name, size)`
// sees each regular member's name and the size its header declares before anything of it is
// inflated; on Read, `take(name, bytes)` gets its bytes (and may keep them: nothing else holds
// them), Skip passes over it, Stop ends the walk (no error: the caller knows why). At most one
// member is held by the reader at a time. Errors as readBundleArchive.
core::Status streamBundleArchive(
    std::string_view bytes, const core::BundleLimits& limits,
    const std::function<MemberAction(const std::string& name, std::uint64_t size)>& decide,
    const std::function<void(std::string name, std::string bytes)>& take);

// A bundle read and verified while it inflates (core::BundleVerifier), within a memory bound
// that does not grow with what a forger puts in: every member the exporter's verified
// manifest lists at its size is read and kept (the signed sizes bound them); everything else
// (no manifest yet, a manifest that does not verify, members it does not list or lists at
// another size, host results and attachments) may add up to limits.max_unvouched_bytes, and
// the reader stops at the member that would pass it (a BundleProblem::Unread in `check`).
// Peak memory: the archive's bytes + the vouched members + max_unvouched_bytes (64 MiB) + one
// member in flight (at most max_member_bytes, 64 MiB) + zstd's window (at most 128 MiB). A
// zstd bomb or forged bundle is refused after inflating at most max_unvouched_bytes.
// Bundles this version writes carry manifest.json and manifest.sig first (writeBundleArchive).
struct VerifiedBundle {
  core::BundleCheck check;
  core::BundleMembers members;  // every member read; all of them when check.ok()
};
core::Result<VerifiedBundle> readVerifiedBundle(std::string_view bytes,
                                                const core::SignatureVerifier& verifier,
                                                std::chrono::system_clock::time_point at,
                                                const core::BundleLimits& limits = {});

}  // namespace ibc::bundle
