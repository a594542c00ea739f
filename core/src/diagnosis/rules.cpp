#include "ibc/core/rules.h"

#include <cmath>
#include <cstdio>

#include "rules_internal.h"

namespace ibc::core {

std::string nodeName(const ::ibcollect::v1::Snapshot& snapshot) {
  if (!snapshot.node().slurm_node().empty()) return snapshot.node().slurm_node();
  if (!snapshot.node().hostname().empty()) return snapshot.node().hostname();
  return "unknown-node";
}

namespace rules {

RuleContext::RuleContext(const v1::Snapshot& s, const RuleOptions& o)
    : snap(s), opts(o), node(nodeName(s)), window(s) {}

void RuleContext::add(FindingSpec spec) {
  if (spec.node.empty()) spec.node = node;
  findings.push_back(makeFinding(std::move(spec)));
}

const v1::NetDevice* RuleContext::netdevFor(const std::string& device, uint32_t port) const {
  for (const auto& n : snap.netdevs()) {
    if (n.rdma_device() == device && (n.rdma_port() == port || n.rdma_port() == 0)) return &n;
  }
  return nullptr;
}

const v1::RdmaDevice* RuleContext::device(const std::string& name) const {
  for (const auto& d : snap.devices()) {
    if (d.name() == name) return &d;
  }
  return nullptr;
}

bool RuleContext::hasFinding(FindingCode code) const {
  const std::string_view name = findingCodeName(code);
  for (const auto& f : findings) {
    if (f.code() == name) return true;
  }
  return false;
}

std::string deltaText(int64_t delta, double interval_s) {
  std::string s = (delta >= 0 ? "+" : "") + std::to_string(delta) + " in " + num(interval_s) + " s";
  if (interval_s > 0 && delta > 0) s += " (" + num(static_cast<double>(delta) / interval_s) + "/s)";
  return s;
}

bool physicalFunctionIsRemote(const v1::Snapshot& snap, const v1::RdmaDevice& dev) {
  return dev.is_virtual_function() || snap.node().virtual_machine();
}

}  // namespace rules

std::vector<::ibcollect::v1::Finding> diagnoseNodeEvidence(
    const ::ibcollect::v1::Snapshot& snapshot, const RuleOptions& options) {
  rules::RuleContext ctx(snapshot, options);
  rules::runLinkRules(ctx);
  rules::runCounterRules(ctx);
  rules::runHostRules(ctx);
  rules::runKernelLogRules(ctx);
  rules::runNcclRules(ctx);
  rules::runNcclTestsRules(ctx);
  rules::runRdmaTestRules(ctx);
  sortFindings(ctx.findings);
  return std::move(ctx.findings);
}

std::vector<::ibcollect::v1::Finding> diagnoseNode(const ::ibcollect::v1::Snapshot& snapshot,
                                                   const RuleOptions& options) {
  auto findings = diagnoseNodeEvidence(snapshot, options);
  // Last: escalation summarises what the others found.
  for (auto& f : escalationFindings(snapshot, findings)) findings.push_back(std::move(f));
  sortFindings(findings);
  return findings;
}

}  // namespace ibc::core
