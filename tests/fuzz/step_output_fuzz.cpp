#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibc/core/encoding.h"
#include "ibc/core/step_output.h"
#include "ibc/core/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ibc::core::StepOutputCollector c;
  ibc::core::forEachLine(text, [&](std::string_view line, uint32_t) { c.addLine(line); });
  (void)c.incomplete();
  (void)ibc::core::base64Decode(text);
  return 0;
}
