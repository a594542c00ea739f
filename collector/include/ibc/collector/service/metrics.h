#pragma once

// The collector's counters in Prometheus text exposition format 0.0.4 (docs/operations.md), served
// by `--metrics ADDR:PORT` (net/metrics_server.h). Families:
//
//   ibcollect_uploads_accepted_total{outcome="stored"|"duplicate"}  counter
//   ibcollect_rejections_total{reason="REJECT_REASON_..."}         counter (every reason)
//   ibcollect_received_bytes_total                                 counter: whole frames
//   ibcollect_stored_bytes_total                                   counter: envelopes stored
//   ibcollect_writer_queue_depth                                   gauge: uploads waiting
//   ibcollect_ack_latency_seconds                                  histogram: a whole upload
//     frame taken by the service (a worker thread) → durable acknowledgement (WAL synced);
//     the time to read the frame off the network and to wait for a worker is not in it
//   ibcollect_store_size_bytes                                     gauge: SST + blob + WAL
//   ibcollect_store_part_bytes{part="sst"|"blob"|"wal"}            gauge
//   ibcollect_open_connections                                     gauge
//   ibcollect_connections_total                                    counter
//   ibcollect_retention_deleted_snapshots_total                    counter
//   process_start_time_seconds                                     gauge (unix seconds)

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ibc/collector/store/maintenance.h"
#include "ibcollect/v1/collector.pb.h"

namespace ibc::collector {

// Upper bounds (seconds) of the ack latency buckets; +Inf is implied.
inline constexpr std::array<double, 13> kAckLatencyBuckets = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// A fixed-bucket histogram updated lock-free from any thread.
class LatencyHistogram {
 public:
  struct Counts {
    std::array<uint64_t, kAckLatencyBuckets.size()> cumulative{};  // <= each bound
    uint64_t count = 0;
    double sum_seconds = 0;
  };
  void observe(std::chrono::nanoseconds d);
  Counts counts() const;

 private:
  std::array<std::atomic<uint64_t>, kAckLatencyBuckets.size() + 1> buckets_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

struct MetricsSnapshot {
  ::ibcollect::v1::CollectorStats stats;
  uint64_t received_bytes = 0;
  uint64_t writer_queue_depth = 0;
  LatencyHistogram::Counts ack_latency;
  std::optional<StoreSizeFigures> store_size;  // nullopt: could not be read (not exported)
  uint64_t retention_deleted = 0;
  double process_start_time_seconds = 0;
};

// The exposition text, families in the order above, every line ending in "\n".
std::string prometheusText(const MetricsSnapshot& m);

}  // namespace ibc::collector
