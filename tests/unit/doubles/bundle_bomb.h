#pragma once

// SYNTHETIC hostile bundles for tests and bench/bundle.sh: a decompression bomb made here, not
// captured. `members` members of `member_bytes` zero bytes each (named
// snapshots/bomb-NNNN.ibsnap), tar compressed with zstd (about 1:30,000), written straight to
// `path` without holding them; `head` members (say a real manifest.json and manifest.sig lifted
// from another bundle) come first. Returns the file's size; throws std::runtime_error when
// libarchive fails.

#include <cstdint>
#include <string>

#include "ibc/core/bundle.h"

namespace ibc::test {

std::uint64_t writeZeroBomb(const std::string& path, const core::BundleMembers& head, int members,
                            std::uint64_t member_bytes);

}  // namespace ibc::test
