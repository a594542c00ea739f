#pragma once

// Helpers of the NCCL log tests (nccl_log_test.cpp, nccl_log_lines_test.cpp,
// nccl_log_events_test.cpp): the real captures of tests/fixtures/real/nccl-logs by name, and
// what a summary made of them (its event kinds, a transport's use).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/nccl_log.h"

namespace ibc::test {

namespace v1 = ::ibcollect::v1;

inline const std::string kLogDir = "real/nccl-logs";

// The real capture kLogDir/`name` parsed; fails the current test when it is empty.
inline v1::NcclLogSummary parseFixture(const std::string& name,
                                       const core::NcclLogOptions& options = {}) {
  const std::string text = readFixture(kLogDir + "/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return core::parseNcclLog(text, options);
}

// The kinds of the summary's events, in their order.
inline std::vector<v1::NcclEvent::Kind> kindsOf(const v1::NcclLogSummary& s) {
  std::vector<v1::NcclEvent::Kind> out;
  for (const auto& e : s.events()) out.push_back(e.kind());
  return out;
}

inline int countKind(const v1::NcclLogSummary& s, v1::NcclEvent::Kind kind) {
  const auto kinds = kindsOf(s);
  return static_cast<int>(std::count(kinds.begin(), kinds.end(), kind));
}

inline std::vector<std::string> toVector(const google::protobuf::RepeatedPtrField<std::string>& f) {
  return {f.begin(), f.end()};
}

// The summary's use of transport `name` ("IB", "Socket", ...); nullptr when it has none.
inline const v1::NcclTransportUse* transport(const v1::NcclLogSummary& s, const std::string& name) {
  for (const auto& t : s.transports()) {
    if (t.transport() == name) return &t;
  }
  return nullptr;
}

}  // namespace ibc::test
