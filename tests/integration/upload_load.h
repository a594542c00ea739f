#pragma once

// Honest load against a running collector, for the tests that do something to it meanwhile
// (kill -9, an online backup): `threads` connections each upload signed snapshots until
// stop() or until the collector stops answering, and every acknowledged one is kept.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ibc/agent/upload.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::test {

class UploadLoad {
 public:
  using Connect = std::function<std::unique_ptr<ibc::agent::CollectorConnection>()>;
  // The upload request a thread sends as its i-th (a signed snapshot).
  using Request = std::function<::ibcollect::v1::CollectorRequest(int thread, int i)>;

  UploadLoad(int threads, const Connect& connect, const Request& request) {
    for (int t = 0; t < threads; ++t) {
      uploaders_.emplace_back([this, t, connect, request] {
        auto c = connect();
        for (int i = 0; c && !stop_; ++i) {
          const auto r = request(t, i);
          auto ack = c->call(r);
          if (!ack.ok() || !ack->has_ack()) break;  // the collector died under us
          std::lock_guard<std::mutex> lock(m_);
          acked_.emplace_back(ack->ack().snapshot_id(), r.upload().signed_snapshot());
        }
      });
    }
  }
  ~UploadLoad() { stop(); }
  UploadLoad(const UploadLoad&) = delete;
  UploadLoad& operator=(const UploadLoad&) = delete;

  // Ends the uploads and waits for the threads.
  void stop() {
    stop_ = true;
    for (auto& t : uploaders_) {
      if (t.joinable()) t.join();
    }
  }
  std::size_t count() const {
    std::lock_guard<std::mutex> lock(m_);
    return acked_.size();
  }
  // (snapshot id, signed bytes) of every acknowledged upload, in acknowledgement order.
  std::vector<std::pair<std::string, std::string>> acked() const {
    std::lock_guard<std::mutex> lock(m_);
    return acked_;
  }

 private:
  mutable std::mutex m_;
  std::vector<std::pair<std::string, std::string>> acked_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> uploaders_;
};

}  // namespace ibc::test
