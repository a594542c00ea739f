#include "ibc/collector/service/snapshot_keys.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <limits>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::collector {

using core::Error;
using core::ErrorCode;
using google::protobuf::internal::WireFormatLite;

namespace {
constexpr int kNodeField = 2;  // Snapshot.node (snapshot.proto)

bool goodName(const std::string& s) {
  return s.size() <= kMaxIndexNameBytes && s.find('\0') == std::string::npos;
}
}  // namespace

core::Result<SnapshotIndexKeys> readSnapshotIndexKeys(std::string_view snapshot_bytes) {
  if (snapshot_bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return Error{ErrorCode::Malformed, "snapshot larger than 2 GiB"};
  }
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(snapshot_bytes.data()),
                                            static_cast<int>(snapshot_bytes.size()));
  ::ibcollect::v1::NodeIdentity node;
  std::string field;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (!in.ConsumedEntireMessage()) {
        return Error{ErrorCode::Malformed, "snapshot bytes are not a Snapshot"};
      }
      break;
    }
    if (WireFormatLite::GetTagFieldNumber(tag) == kNodeField &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || !in.ReadString(&field, static_cast<int>(length)) ||
          !node.MergeFromString(field)) {
        return Error{ErrorCode::Malformed, "snapshot node identity does not parse"};
      }
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) {
      return Error{ErrorCode::Malformed, "snapshot bytes are not a Snapshot"};
    }
  }
  SnapshotIndexKeys keys;
  keys.job_id = node.job_id();
  keys.node = !node.slurm_node().empty() ? node.slurm_node() : node.hostname();
  keys.collected_at_unix_ms = node.collected_at_unix_ms();
  if (!goodName(keys.job_id) || !goodName(keys.node)) {
    return Error{ErrorCode::Malformed, "job id or node name too long or holding a zero byte"};
  }
  return keys;
}

}  // namespace ibc::collector
