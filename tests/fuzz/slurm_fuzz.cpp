#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibc/core/slurm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto job = ibc::core::parseScontrolShowJob(text); job.ok()) {
    (void)ibc::core::expandHostlist(job->node_list, 4096);
  }
  if (auto hosts = ibc::core::expandHostlist(text, 4096); hosts.ok()) {
    (void)ibc::core::compressHostlist(*hosts);
  }
  return 0;
}
