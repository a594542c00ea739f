#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibc/core/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ibc::core::NcclTestsOptions options;
  options.max_rows = 64;
  (void)ibc::core::parseNcclTests(text, options);
  return 0;
}
