#pragma once

// The `.ibsnap` file: the 8-byte magic "IBSNAP01" followed by one serialized
// `ibcollect.v1.SignedSnapshot` (proto/ibcollect/v1/signed.proto). The envelope is
// checked and stored without parsing the Snapshot inside; openSnapshot() parses it.

#include <cstddef>
#include <string>
#include <string_view>

#include "ibc/core/result.h"
#include "ibcollect/v1/signed.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

inline constexpr std::string_view kSnapshotMagic = "IBSNAP01";
// Largest .ibsnap accepted (a snapshot keeps bounded raw logs; real ones are < 4 MiB).
inline constexpr std::size_t kMaxSnapshotFileBytes = 64u << 20;
inline constexpr uint32_t kSnapshotSchemaVersion = 1;

// Serializes a Snapshot deterministically (same message → same bytes, so the snapshot id
// = SHA-256 of these bytes is stable).
std::string serializeSnapshot(const ::ibcollect::v1::Snapshot& snapshot);

// An envelope with no signature (identities arrive with the collector issue).
::ibcollect::v1::SignedSnapshot wrapUnsigned(const ::ibcollect::v1::Snapshot& snapshot);

std::string encodeSnapshotFile(const ::ibcollect::v1::SignedSnapshot& signed_snapshot);

// Errors: Malformed (no magic, not an envelope, empty snapshot), TooLarge, Unsupported
// (a newer magic version).
Result<::ibcollect::v1::SignedSnapshot> decodeSnapshotFile(std::string_view bytes);

// Parses the Snapshot inside an envelope. Errors: Malformed, Unsupported (schema newer
// than this build).
Result<::ibcollect::v1::Snapshot> openSnapshot(const ::ibcollect::v1::SignedSnapshot& envelope);

// Lower-case hex SHA-256 of the signed bytes: the snapshot id.
std::string snapshotId(const ::ibcollect::v1::SignedSnapshot& envelope);

}  // namespace ibc::core
