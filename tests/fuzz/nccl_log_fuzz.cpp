#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ibc/core/nccl_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace ibc::core;
  NcclLogOptions options;
  options.default_host = "fuzz-host";
  options.max_events = 32;
  const std::vector<v1::NcclLogSummary> parts = {parseNcclLog(text, options),
                                                 parseNcclLog(text.substr(size / 2))};
  (void)mergeNcclLogs(parts, 16);
  return 0;
}
