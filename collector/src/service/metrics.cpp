#include "ibc/collector/service/metrics.h"

#include <charconv>
#include <initializer_list>
#include <utility>

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;

void LatencyHistogram::observe(std::chrono::nanoseconds d) {
  const double s = std::chrono::duration<double>(d).count();
  std::size_t i = 0;
  while (i < kAckLatencyBuckets.size() && s > kAckLatencyBuckets[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, d.count())),
                    std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

LatencyHistogram::Counts LatencyHistogram::counts() const {
  Counts c;
  uint64_t running = 0;
  for (std::size_t i = 0; i < kAckLatencyBuckets.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    c.cumulative[i] = running;
  }
  // The total is at least every bucket's count, so +Inf never reads below a bound.
  c.count = std::max(running + buckets_.back().load(std::memory_order_relaxed),
                     count_.load(std::memory_order_relaxed));
  c.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return c;
}

namespace {

// The shortest text that reads back as `v` ("0.001", "10", "1.5e-05").
std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// One sample line; `value` as the exposition format writes it.
void sample(std::string& out, const std::string& name, const std::string& value) {
  out += name + ' ' + value + '\n';
}
void sample(std::string& out, const std::string& name, uint64_t value) {
  sample(out, name, std::to_string(value));
}

// A family of one sample without labels.
template <typename Value>
void single(std::string& out, const char* name, const char* type, const char* help,
            const Value& value) {
  family(out, name, type, help);
  sample(out, name, value);
}

}  // namespace

std::string prometheusText(const MetricsSnapshot& m) {
  std::string out;
  const auto& s = m.stats;
  family(out, "ibcollect_uploads_accepted_total", "counter",
         "Uploads acknowledged, by whether the snapshot was new or already stored.");
  sample(out, "ibcollect_uploads_accepted_total{outcome=\"stored\"}", s.uploads_stored());
  sample(out, "ibcollect_uploads_accepted_total{outcome=\"duplicate\"}", s.uploads_duplicate());

  family(out, "ibcollect_rejections_total", "counter",
         "Requests and connections refused, by reason (collector.proto RejectReason).");
  const auto* reasons = v1::RejectReason_descriptor();
  for (int i = 0; i < reasons->value_count(); ++i) {
    const auto* value = reasons->value(i);
    if (value->number() == v1::REJECT_REASON_UNSPECIFIED) continue;
    uint64_t n = 0;
    for (const auto& r : s.rejections()) {
      if (r.reason() == value->number()) n = r.count();
    }
    sample(out, "ibcollect_rejections_total{reason=\"" + value->name() + "\"}", n);
  }

  single(out, "ibcollect_received_bytes_total", "counter",
         "Bytes of whole request frames received (headers and payloads).", m.received_bytes);
  single(out, "ibcollect_stored_bytes_total", "counter", "Bytes of snapshot envelopes stored.",
         s.bytes_stored());

  single(out, "ibcollect_writer_queue_depth", "gauge",
         "Verified uploads waiting for the group-commit writer.", m.writer_queue_depth);

  family(out, "ibcollect_ack_latency_seconds", "histogram",
         "Seconds from an upload taken by the service to its durable acknowledgement.");
  const auto& h = m.ack_latency;
  for (std::size_t i = 0; i < kAckLatencyBuckets.size(); ++i) {
    sample(out,
           "ibcollect_ack_latency_seconds_bucket{le=\"" + number(kAckLatencyBuckets[i]) + "\"}",
           h.cumulative[i]);
  }
  sample(out, "ibcollect_ack_latency_seconds_bucket{le=\"+Inf\"}", h.count);
  sample(out, "ibcollect_ack_latency_seconds_sum", number(h.sum_seconds));
  sample(out, "ibcollect_ack_latency_seconds_count", h.count);

  if (m.store_size) {
    const auto& z = *m.store_size;
    family(out, "ibcollect_store_size_bytes", "gauge",
           "Bytes of the store on disk: live SST and blob files plus the WAL.");
    sample(out, "ibcollect_store_size_bytes", z.sst_bytes + z.blob_bytes + z.wal_bytes);
    family(out, "ibcollect_store_part_bytes", "gauge", "Bytes of the store on disk, by part.");
    using Part = std::pair<const char*, uint64_t>;
    for (const auto& [part, bytes] :
         {Part{"sst", z.sst_bytes}, Part{"blob", z.blob_bytes}, Part{"wal", z.wal_bytes}}) {
      sample(out, std::string("ibcollect_store_part_bytes{part=\"") + part + "\"}", bytes);
    }
  }

  single(out, "ibcollect_open_connections", "gauge", "Connections open now.", s.connections_open());
  single(out, "ibcollect_connections_total", "counter", "Connections accepted.",
         s.connections_accepted());
  single(out, "ibcollect_retention_deleted_snapshots_total", "counter",
         "Snapshots deleted by the retention policy.", m.retention_deleted);
  single(out, "process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.",
         number(m.process_start_time_seconds));
  return out;
}

}  // namespace ibc::collector
