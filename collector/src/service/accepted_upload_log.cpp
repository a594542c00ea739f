#include "ibc/collector/service/accepted_upload_log.h"

#include <algorithm>

#include "ibc/collector/service/service.h"

namespace ibc::collector {

namespace {

constexpr std::chrono::seconds kSecond{1};

// "1" for a whole second, "0.4" for the part of one a drain ended.
std::string secondsText(std::chrono::steady_clock::duration d) {
  if (d >= kSecond) return "1";
  const auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(d).count() / 100;
  return "0." + std::to_string(tenths);
}

}  // namespace

AcceptedUploadLog::AcceptedUploadLog(EventLog& log, std::size_t lines_per_second, Now now)
    : log_(log), lines_per_second_(lines_per_second), now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
}

AcceptedUploadLog::~AcceptedUploadLog() { flush(); }

void AcceptedUploadLog::accepted(const Peer& peer, const AcceptedUpload& upload) {
  std::lock_guard<std::mutex> lock(mutex_);
  endSecond(false);
  if (!open_) {
    open_ = true;
    start_ = now_();
  }
  if (lines_ < lines_per_second_) {
    ++lines_;
    LogFields fields{{"snapshot", upload.snapshot_id},
                     {"job", upload.job_id},
                     {"node", upload.node},
                     {"bytes", std::to_string(upload.bytes)},
                     {"already_stored", upload.already_stored ? "true" : "false"}};
    for (auto& f : peerFields(peer)) fields.push_back(std::move(f));
    log_.event(LogLevel::Info, "upload_accepted", fields);
    return;
  }
  ++count_;
  if (upload.already_stored) ++already_stored_;
  bytes_ += upload.bytes;
  // The peer's tenant is the signer's (the service checked): one set entry per tenant.
  tenants_.insert(upload.tenant);
}

void AcceptedUploadLog::tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  endSecond(false);
}

void AcceptedUploadLog::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  endSecond(true);
}

// Caller holds mutex_.
void AcceptedUploadLog::endSecond(bool force) {
  if (!open_ || (!force && now_() - start_ < kSecond)) return;
  if (count_ > 0) {
    LogFields fields{{"count", std::to_string(count_)},
                     {"tenants", std::to_string(tenants_.size())}};
    if (tenants_.size() == 1) fields.push_back({"tenant", *tenants_.begin()});
    fields.push_back({"stored", std::to_string(count_ - already_stored_)});
    fields.push_back({"already_stored", std::to_string(already_stored_)});
    fields.push_back({"bytes", std::to_string(bytes_)});
    fields.push_back({"seconds", secondsText(std::min<std::chrono::steady_clock::duration>(
                                     now_() - start_, kSecond))});
    log_.event(LogLevel::Info, "uploads_accepted", fields);
  }
  open_ = false;
  lines_ = 0;
  count_ = 0;
  already_stored_ = 0;
  bytes_ = 0;
  tenants_.clear();
}

}  // namespace ibc::collector
