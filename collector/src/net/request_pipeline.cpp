#include "request_pipeline.h"

#include <algorithm>

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;

bool endsConnection(const v1::CollectorResponse& answer) {
  // A client that sends something other than a request is broken: stop listening to it.
  return answer.has_rejection() &&
         answer.rejection().reason() == v1::REJECT_REASON_MALFORMED_REQUEST;
}

RequestPipeline::RequestPipeline(std::size_t window) : window_(std::max<std::size_t>(1, window)) {}

uint64_t RequestPipeline::open() {
  const uint64_t seq = next_seq_++;
  slots_.push_back(Slot{seq, std::nullopt, false});
  return seq;
}

void RequestPipeline::complete(uint64_t seq, v1::CollectorResponse response) {
  if (ended_ || slots_.empty()) return;
  // Sequence numbers of the slots are consecutive from the front's.
  const uint64_t first = slots_.front().seq;
  if (seq < first || seq - first >= slots_.size()) return;
  Slot& slot = slots_[static_cast<std::size_t>(seq - first)];
  if (slot.response) return;
  slot.last = endsConnection(response);
  slot.response = std::move(response);
}

void RequestPipeline::refuse(v1::CollectorResponse response) {
  if (closing_) return;
  closing_ = true;
  slots_.push_back(Slot{next_seq_++, std::move(response), true});
}

std::optional<RequestPipeline::Answer> RequestPipeline::next() {
  if (ended_ || writing_ || slots_.empty() || !slots_.front().response) return std::nullopt;
  Answer answer{std::move(*slots_.front().response), slots_.front().last};
  slots_.pop_front();
  writing_ = true;
  if (answer.last) {
    // What was read after it is never answered: those requests may have been processed
    // (an upload stored), but the client retries them, and uploads are idempotent.
    ended_ = true;
    closing_ = true;
    slots_.clear();
  }
  return answer;
}

}  // namespace ibc::collector
