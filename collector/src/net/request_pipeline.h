#pragma once

// The order of one connection's pipelined requests (collector.proto: the collector answers
// every request with exactly one response, in order). The network layer reads ahead up to
// `window` requests, hands each to the service at once, and the answers — which come back
// in any order (a query at once, an upload after its group commit) — leave in the order the
// requests came. A request counts against the window from the moment it was read until
// its answer is on the wire, so a client that reads no answers can make the collector
// hold at most `window` requests and answers for it.
//
// An answer may end the connection: one the network layer made itself (refuse(): a frame
// too large, no room to read it, shutting down — the rest of the stream was not read) and
// a MALFORMED_REQUEST rejection (the frame was not a request: nothing after it can be
// trusted). Answers before it still leave, in order; answers after it never do.
//
// Plain types, no sockets: server.cpp drives it from the io thread. Not thread-safe.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "ibcollect/v1/collector.pb.h"

namespace ibc::collector {

// True when the collector closes the connection after sending `answer`.
bool endsConnection(const ::ibcollect::v1::CollectorResponse& answer);

class RequestPipeline {
 public:
  struct Answer {
    ::ibcollect::v1::CollectorResponse response;
    bool last = false;  // the connection ends once it is written
  };

  // `window` 0 is taken as 1 (one request at a time).
  explicit RequestPipeline(std::size_t window);

  std::size_t window() const { return window_; }
  // Requests read whose answer is not on the wire yet (the one being written included).
  std::size_t unanswered() const { return slots_.size() + (writing_ ? 1 : 0); }
  // Nothing read is waiting for its answer or being answered.
  bool idle() const { return unanswered() == 0; }
  // Another request may be read: below the window, and no answer ends the connection.
  bool hasRoom() const { return !closing_ && unanswered() < window_; }
  // An answer that ends the connection was taken by next(): nothing more leaves.
  bool ended() const { return ended_; }

  // A request was read and goes to the service: its place in the answer order.
  // Precondition: hasRoom().
  uint64_t open();
  // The service's answer to request `seq`, in any order. Ignored once ended() (those
  // requests are never answered).
  void complete(uint64_t seq, ::ibcollect::v1::CollectorResponse response);
  // The network layer refused the frame it was reading: `response` is answered after
  // every request before it, and then the connection ends. No request is opened after it.
  void refuse(::ibcollect::v1::CollectorResponse response);

  // The next answer in request order once it has arrived, and while no other answer is
  // being written; nullopt otherwise. The caller writes it, then calls written().
  std::optional<Answer> next();
  void written() { writing_ = false; }

 private:
  struct Slot {
    uint64_t seq = 0;
    std::optional<::ibcollect::v1::CollectorResponse> response;
    bool last = false;
  };

  std::size_t window_;
  std::deque<Slot> slots_;  // unanswered requests, in request order
  uint64_t next_seq_ = 1;
  bool writing_ = false;
  bool closing_ = false;  // refuse() was called: nothing more is opened
  bool ended_ = false;
};

}  // namespace ibc::collector
