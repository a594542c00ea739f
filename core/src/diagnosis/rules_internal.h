#pragma once

// Shared plumbing of the rule files (rules_*.cpp). Not a public header.

#include <string>
#include <vector>

#include "ibc/core/counters.h"
#include "ibc/core/findings.h"
#include "ibc/core/rules.h"
#include "ibc/core/text.h"

namespace ibc::core::rules {

namespace v1 = ::ibcollect::v1;

struct RuleContext {
  RuleContext(const v1::Snapshot& s, const RuleOptions& o);
  const v1::Snapshot& snap;
  const RuleOptions& opts;
  std::string node;
  CounterWindowIndex window;
  std::vector<v1::Finding> findings;

  void add(FindingSpec spec);
  // The netdev bound to an RDMA port, nullptr when none is known.
  const v1::NetDevice* netdevFor(const std::string& device, uint32_t port) const;
  const v1::RdmaDevice* device(const std::string& name) const;
  bool hasFinding(FindingCode code) const;
};

// What a rule says of one class of evidence: its code, its severity, the summary's words
// and the action (the rule adds the node's specifics).
struct FindingText {
  FindingCode code;
  Severity severity;
  const char* summary;
  const char* action;
};

void runLinkRules(RuleContext& ctx);
void runCounterRules(RuleContext& ctx);
void runHostRules(RuleContext& ctx);
void runKernelLogRules(RuleContext& ctx);
void runNcclRules(RuleContext& ctx);
void runNcclTestsRules(RuleContext& ctx);
void runRdmaTestRules(RuleContext& ctx);

// "12.5", "200", "0.001": shortest readable form of a number.
inline std::string num(double v) { return formatNumber(v, 4); }
// "1.2 MiB/s"-free plain rate text: "+37 in 10 s (3.7/s)".
std::string deltaText(int64_t delta, double interval_s);
// Physical-layer vs. other devices: true when the RDMA device is a VF or the node a VM,
// i.e. its physical function belongs to the provider.
bool physicalFunctionIsRemote(const v1::Snapshot& snap, const v1::RdmaDevice& dev);

}  // namespace ibc::core::rules
