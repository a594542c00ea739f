#include "ibc/core/frame.h"

#include <cassert>

namespace ibc::core {

void appendFrame(std::string& out, std::string_view payload) {
  assert(payload.size() <= UINT32_MAX);
  const auto n = static_cast<uint32_t>(payload.size());
  const char header[kFrameHeaderBytes] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                                          static_cast<char>(n >> 8), static_cast<char>(n)};
  out.append(header, kFrameHeaderBytes);
  out.append(payload);
}

std::string encodeFrame(std::string_view payload) {
  std::string out;
  out.reserve(kFrameHeaderBytes + payload.size());
  appendFrame(out, payload);
  return out;
}

Result<std::size_t> decodeFrameHeader(const unsigned char (&header)[kFrameHeaderBytes],
                                      std::size_t max_frame_bytes) {
  const std::size_t n = (std::size_t{header[0]} << 24) | (std::size_t{header[1]} << 16) |
                        (std::size_t{header[2]} << 8) | std::size_t{header[3]};
  if (n > max_frame_bytes) {
    return Error{ErrorCode::TooLarge, "frame of " + std::to_string(n) +
                                          " bytes exceeds the limit of " +
                                          std::to_string(max_frame_bytes)};
  }
  return n;
}

FrameDecoder::FrameDecoder(std::size_t max_frame_bytes) : max_(max_frame_bytes) {}

Status FrameDecoder::feed(std::string_view bytes) {
  if (failed_) return error_;
  while (!bytes.empty()) {
    if (!have_header_) {
      while (header_fill_ < kFrameHeaderBytes && !bytes.empty()) {
        header_[header_fill_++] = static_cast<unsigned char>(bytes.front());
        bytes.remove_prefix(1);
      }
      if (header_fill_ < kFrameHeaderBytes) break;
      auto n = decodeFrameHeader(header_, max_);
      if (!n.ok()) {
        failed_ = true;
        error_ = n.error();
        return error_;
      }
      have_header_ = true;
      want_ = *n;
      payload_.clear();
      // Grows with what arrives, never to what a header merely claims.
      payload_.reserve(std::min<std::size_t>(want_, 1u << 16));
    }
    const std::size_t take = std::min(want_ - payload_.size(), bytes.size());
    payload_.append(bytes.data(), take);
    bytes.remove_prefix(take);
    if (payload_.size() == want_) {
      ready_.push_back(std::move(payload_));
      payload_ = std::string();
      have_header_ = false;
      header_fill_ = 0;
    }
  }
  return {};
}

std::optional<std::string> FrameDecoder::next() {
  if (ready_.empty()) return std::nullopt;
  std::string out = std::move(ready_.front());
  ready_.pop_front();
  return out;
}

}  // namespace ibc::core
