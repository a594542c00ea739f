// The store's key layout (store.h, store_access.h).

#include "store_access.h"

namespace ibc::collector {

std::string timeKey(int64_t unix_ms) {
  const uint64_t u = static_cast<uint64_t>(unix_ms) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
  return out;
}

int64_t timeFromKey(std::string_view bytes) {
  uint64_t u = 0;
  for (unsigned char c : bytes.substr(0, 8)) u = (u << 8) | c;
  return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
}

std::string joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out.append(p);
    out.push_back('\0');
  }
  return out;
}

std::string byNodeKey(const ::ibcollect::v1::SnapshotInfo& info, std::string_view id) {
  return joined({info.tenant(), info.node()}) + timeKey(info.collected_at_unix_ms()) +
         std::string(id);
}

std::string byJobKey(const ::ibcollect::v1::SnapshotInfo& info, std::string_view id) {
  return joined({info.tenant(), info.job_id(), info.node()}) +
         timeKey(info.collected_at_unix_ms()) + std::string(id);
}

}  // namespace ibc::collector
