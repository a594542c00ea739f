#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibc/core/sysfs_values.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace ibc::core;
  if (auto v = parseEnumValue(text); v.ok()) {
    (void)portStateOf(*v);
    (void)physStateOf(*v);
  }
  (void)parseRate(text);
  (void)makeCounter("port_xmit_wait", text, CounterSet::PortCounters);
  (void)parsePcieSpeedGts(text);
  (void)parsePcieWidth(text);
  (void)isZeroGid(text);
  (void)mellanoxVirtualFunctionName(text);
  (void)hcaTypeToDeviceId(text);
  return 0;
}
