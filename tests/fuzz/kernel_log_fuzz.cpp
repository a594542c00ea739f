#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ibc/core/kernel_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace ibc::core;
  for (const auto& line : parseKernelLogText(text)) {
    (void)classifyKernelMessage(line.text());
    (void)kernelMessageSubject(line.text());
  }
  (void)parseKmsgRecord(text);
  (void)isRdmaRelevant(text);
  (void)classifyKernelMessage(text);
  (void)kernelMessageSubjectOf(text);
  KernelLogOptions options;
  options.max_lines = 16;
  (void)filterKernelLog(text, options);
  return 0;
}
