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

// Errors: Malformed (no magic, not an envelope, empty snapshot, see parseSignedEnvelope),
// TooLarge, Unsupported (a newer magic version).
Result<::ibcollect::v1::SignedSnapshot> decodeSnapshotFile(std::string_view bytes);

// Parses serialized envelope bytes, refusing anything that is not exactly the snapshot, the
// signature and the chain in their one canonical encoding (docs/security.md): unknown fields
// (bytes nobody signed, stored and served beside signed ones) and non-canonical encodings
// (repeated, reordered or padded fields that make two byte strings mean one envelope).
// Errors: Malformed, naming what was found.
Result<::ibcollect::v1::SignedSnapshot> parseSignedEnvelope(std::string_view bytes);

// Parses the Snapshot inside an envelope. Errors: Malformed, Unsupported (schema newer
// than this build).
Result<::ibcollect::v1::Snapshot> openSnapshot(const ::ibcollect::v1::SignedSnapshot& envelope);

// The one reading of a `.ibsnap` file's bytes, for every program that opens one (the agent's
// analyze/compare, the console): decodeSnapshotFile, then openSnapshot. The caller reads the
// file (bounded by kMaxSnapshotFileBytes). Errors: those two functions' codes, each message
// prefixed with `name` ("run/gpu01.ibsnap: ...").
Result<::ibcollect::v1::Snapshot> readSnapshotFile(std::string_view name, std::string_view bytes);

// Lower-case hex SHA-256 of the whole signed envelope in its canonical encoding (snapshot,
// signature and chain): the snapshot id. Two tenants can never share one: a re-signed copy
// of someone else's snapshot is a different envelope.
std::string snapshotId(const ::ibcollect::v1::SignedSnapshot& envelope);

// The canonical bytes of an envelope (what snapshotId() hashes, what uploads carry).
std::string serializeEnvelope(const ::ibcollect::v1::SignedSnapshot& envelope);

}  // namespace ibc::core
