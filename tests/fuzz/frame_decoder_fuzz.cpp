// The collector's frame decoder and request parser on arbitrary bytes, split at an
// input-chosen point. Invariant: the frames decoded, re-encoded, are exactly the input
// consumed (all of it unless the decoder failed or stopped mid-frame).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ibc/core/frame.h"
#include "ibcollect/v1/collector.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  ibc::core::FrameDecoder decoder(1u << 16);
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  bool ok = decoder.feed(in.substr(0, split)).ok();
  if (ok) ok = decoder.feed(in.substr(split)).ok();
  std::string again;
  while (auto frame = decoder.next()) {
    ibc::core::appendFrame(again, *frame);
    ibcollect::v1::CollectorRequest request;
    if (request.ParseFromString(*frame) && request.has_upload()) {
      (void)request.upload().signed_snapshot().size();
    }
    ibcollect::v1::CollectorResponse response;
    (void)response.ParseFromString(*frame);
  }
  if (again.size() > size || in.substr(0, again.size()) != again) std::abort();
  if (ok && !decoder.midFrame() && again.size() != size) std::abort();
  if (size >= ibc::core::kFrameHeaderBytes) {
    unsigned char header[ibc::core::kFrameHeaderBytes];
    for (std::size_t i = 0; i < sizeof header; ++i) header[i] = data[i];
    (void)ibc::core::decodeFrameHeader(header, 1u << 16);
  }
  return 0;
}
