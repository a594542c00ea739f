#pragma once

// Length-prefixed frames, the unit of the agent ↔ collector stream (docs/security.md): a 4-byte
// big-endian payload length, then the payload (one serialized protobuf message of
// proto/ibcollect/v1/collector.proto). Pure byte handling; readers enforce a maximum
// frame size before buffering anything of the payload.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "ibc/core/protocol.h"  // rejectReasonName, once declared here
#include "ibc/core/result.h"
#include "ibc/core/snapshot_file.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::core {

inline constexpr std::size_t kFrameHeaderBytes = 4;
// Largest frame accepted by default: the largest `.ibsnap` plus room for the request
// around it.
inline constexpr std::size_t kDefaultMaxFrameBytes = kMaxSnapshotFileBytes + (64u << 10);

// Appends one frame holding `payload` to `out`. Precondition: payload fits in 32 bits.
void appendFrame(std::string& out, std::string_view payload);
std::string encodeFrame(std::string_view payload);

// The payload length a 4-byte header announces. Errors: TooLarge when above
// `max_frame_bytes` (the stream cannot be trusted past such a header).
Result<std::size_t> decodeFrameHeader(const unsigned char (&header)[kFrameHeaderBytes],
                                      std::size_t max_frame_bytes);

// Splits a byte stream into frame payloads, whatever the chunking of the input. Once
// feed() fails, the decoder stays failed: the stream has lost its framing.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_frame_bytes = kDefaultMaxFrameBytes);

  // Takes received bytes. Errors: TooLarge (a header above the limit).
  Status feed(std::string_view bytes);
  // The next complete payload, oldest first.
  std::optional<std::string> next();
  // True while part of a frame (header or payload) is buffered: the stream ended early if
  // it closes now.
  bool midFrame() const { return have_header_ || header_fill_ > 0; }
  bool failed() const { return failed_; }

 private:
  std::size_t max_;
  unsigned char header_[kFrameHeaderBytes] = {};
  std::size_t header_fill_ = 0;
  bool have_header_ = false;
  std::size_t want_ = 0;
  std::string payload_;
  std::deque<std::string> ready_;
  bool failed_ = false;
  Error error_{ErrorCode::TooLarge, {}};
};

}  // namespace ibc::core
