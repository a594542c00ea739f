#include "ibc/core/snapshot_file.h"

#include "ibc/core/encoding.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/unknown_field_set.h>

#include <cstdint>

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

std::string serializeSnapshot(const v1::Snapshot& snapshot) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    snapshot.SerializeToCodedStream(&coded);
  }
  return out;
}

v1::SignedSnapshot wrapUnsigned(const v1::Snapshot& snapshot) {
  v1::SignedSnapshot env;
  env.set_snapshot(serializeSnapshot(snapshot));
  return env;
}

std::string serializeEnvelope(const v1::SignedSnapshot& envelope) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    envelope.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string encodeSnapshotFile(const v1::SignedSnapshot& signed_snapshot) {
  return std::string(kSnapshotMagic) + serializeEnvelope(signed_snapshot);
}

Result<v1::SignedSnapshot> parseSignedEnvelope(std::string_view bytes) {
  v1::SignedSnapshot env;
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX) ||
      !env.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Error{ErrorCode::Malformed, "corrupt snapshot envelope (truncated or damaged)"};
  }
  const auto& unknown = env.GetReflection()->GetUnknownFields(env);
  if (!unknown.empty()) {
    std::size_t extra = 0;
    for (int i = 0; i < unknown.field_count(); ++i) {
      const auto& f = unknown.field(i);
      extra += f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED
                   ? f.length_delimited().size()
                   : 8;
    }
    return Error{ErrorCode::Malformed, "the envelope carries " +
                                           std::to_string(unknown.field_count()) +
                                           " unknown field(s) (about " + std::to_string(extra) +
                                           " bytes) that no signature covers; refused"};
  }
  if (serializeEnvelope(env) != bytes) {
    return Error{ErrorCode::Malformed,
                 "the envelope is not in its canonical encoding (repeated, reordered or padded "
                 "fields); refused"};
  }
  if (env.snapshot().empty()) {
    return Error{ErrorCode::Malformed, "snapshot envelope holds no snapshot"};
  }
  return env;
}

Result<v1::SignedSnapshot> decodeSnapshotFile(std::string_view bytes) {
  if (bytes.size() > kMaxSnapshotFileBytes) {
    return Error{ErrorCode::TooLarge, "larger than " + std::to_string(kMaxSnapshotFileBytes >> 20) +
                                          " MiB: not an ibcollect snapshot"};
  }
  if (bytes.size() < kSnapshotMagic.size() || bytes.substr(0, 6) != kSnapshotMagic.substr(0, 6)) {
    return Error{ErrorCode::Malformed, "not an ibcollect snapshot (no IBSNAP header)"};
  }
  if (bytes.substr(0, kSnapshotMagic.size()) != kSnapshotMagic) {
    return Error{ErrorCode::Unsupported,
                 "snapshot format " + std::string(bytes.substr(6, 2)) +
                     " is newer than this ibcollect understands (01); upgrade ibcollect"};
  }
  return parseSignedEnvelope(bytes.substr(kSnapshotMagic.size()));
}

Result<v1::Snapshot> openSnapshot(const v1::SignedSnapshot& envelope) {
  v1::Snapshot s;
  if (!s.ParseFromString(envelope.snapshot())) {
    return Error{ErrorCode::Malformed, "corrupt snapshot inside a valid envelope"};
  }
  if (s.schema_version() > kSnapshotSchemaVersion) {
    return Error{ErrorCode::Unsupported, "snapshot schema " + std::to_string(s.schema_version()) +
                                             " is newer than this ibcollect (" +
                                             std::to_string(kSnapshotSchemaVersion) + ")"};
  }
  return s;
}

std::string snapshotId(const v1::SignedSnapshot& envelope) {
  return sha256Hex(serializeEnvelope(envelope));
}

Result<v1::Snapshot> readSnapshotFile(std::string_view name, std::string_view bytes) {
  const auto named = [&](const Error& e) {
    return Error{e.code, std::string(name) + ": " + e.message};
  };
  auto envelope = decodeSnapshotFile(bytes);
  if (!envelope.ok()) return named(envelope.error());
  auto snapshot = openSnapshot(*envelope);
  if (!snapshot.ok()) return named(snapshot.error());
  return snapshot;
}

}  // namespace ibc::core
