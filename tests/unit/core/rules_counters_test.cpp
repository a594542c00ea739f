// Counter rules (rules_counters.cpp) on SYNTHETIC snapshots (rule_snapshots.h): one table row
// per code and per severity where the evidence decides it.

#include <gmock/gmock.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ibc/core/rules.h"
#include "rule_snapshots.h"

using ::testing::HasSubstr;

namespace ibc::core {
namespace {

using namespace ibc::test;  // the rule snapshots and what the rules made of them

struct CounterCase {
  const char* counter;
  const char* code;
  const char* old_total_severity;  // non-zero before the window, not moving
  const char* moving_severity;     // grew during the window
};

class CounterRules : public ::testing::TestWithParam<CounterCase> {};

TEST_P(CounterRules, SeverityFollowsWhetherTheCounterMoved) {
  const CounterCase& c = GetParam();
  // The c.code finding of a snapshot whose counter went from 7 to `after` over the window.
  const auto judged = [&c](uint64_t after) {
    auto s = snapshot("");
    addWindow(s, c.counter, 7, after);
    const auto findings = diagnoseNode(s, {});
    const auto* f = find(findings, c.code);
    EXPECT_NE(f, nullptr) << describe(findings);
    return f ? *f : v1::Finding();
  };
  const v1::Finding counted = judged(7);  // counted before the snapshot, still
  EXPECT_EQ(counted.severity(), c.old_total_severity) << counted.ShortDebugString();
  EXPECT_EQ(counted.device(), "mlx5_0");
  EXPECT_EQ(counted.port(), 1u);
  EXPECT_FALSE(counted.action().empty());
  const v1::Finding moving = judged(19);
  EXPECT_EQ(moving.severity(), c.moving_severity) << moving.ShortDebugString();
  EXPECT_THAT(moving.evidence_size() > 0 ? moving.evidence(0) : "", HasSubstr(c.counter));
}

INSTANTIATE_TEST_SUITE_P(
    Codes, CounterRules,
    ::testing::Values(
        CounterCase{"symbol_error", "PHY_ERRORS", "warning", "critical"},
        CounterCase{"link_downed", "LINK_DOWNED", "warning", "critical"},
        CounterCase{"port_xmit_discards", "XMIT_DISCARDS", "warning", "critical"},
        CounterCase{"local_ack_timeout_err", "TRANSPORT_RETRIES", "warning", "critical"},
        CounterCase{"req_cqe_error", "CQE_ERRORS", "warning", "critical"},
        CounterCase{"excessive_buffer_overrun_errors", "BUFFER_OVERRUN", "warning", "critical"},
        // Congestion is the fabric's state, not this node's fault: a level lower.
        CounterCase{"port_xmit_wait", "CONGESTION", "info", "warning"}),
    [](const auto& info) { return std::string(info.param.code); });

}  // namespace
}  // namespace ibc::core
