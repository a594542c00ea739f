// RDMA test rule: RDMA_TEST_LOW_BW, a perftest bandwidth run against its port's rate.

#include <set>

#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "ibc/core/tool_output.h"
#include "rules_internal.h"

namespace ibc::core {

namespace {

bool isBandwidthRun(const v1::RdmaTest& t) {
  return t.bw_average_raw() > 0 || t.bw_average_gbps() > 0;
}

std::string runName(const v1::RdmaTest& t) {
  std::string s = !t.tool().empty() ? t.tool() : (!t.test().empty() ? t.test() : "perftest");
  if (!t.source().empty()) s += " (" + t.source() + ")";
  return s;
}

// The port's rate: the named device's port (perftest's default port is 1), else the one rate
// every active port of the node shares, else --expect-rate.
void findRate(const v1::Snapshot& snap, const v1::RdmaTest& t, const RuleOptions& o,
              RdmaTestBudget& b) {
  const uint32_t port = t.port() != 0 ? t.port() : 1;
  for (const auto& d : snap.devices()) {
    if (t.device().empty() || d.name() != t.device()) continue;
    for (const auto& p : d.ports()) {
      if (p.port() == port && p.rate_gbps() > 0) {
        b.rate_gbps = p.rate_gbps();
        b.rate_from = d.name() + " port " + std::to_string(port);
        return;
      }
    }
  }
  std::set<double> rates;
  for (const auto& d : snap.devices()) {
    for (const auto& p : d.ports()) {
      if (portStateOf(p.state()) == PortState::Active && p.rate_gbps() > 0)
        rates.insert(p.rate_gbps());
    }
  }
  if (rates.size() == 1 && t.device().empty()) {
    b.rate_gbps = *rates.begin();
    b.rate_from = "every active port of the node";
  } else if (o.expect_rate_gbps) {
    b.rate_gbps = *o.expect_rate_gbps;
    b.rate_from = "--expect-rate";
  }
}

}  // namespace

RdmaTestBudget rdmaTestBudget(const v1::Snapshot& snap, const v1::RdmaTest& t,
                              const RuleOptions& o) {
  RdmaTestBudget b;
  findRate(snap, t, o, b);
  const double dirs = t.bidirectional() ? 2 : 1;
  b.budget_gbps = b.rate_gbps * dirs;
  if (t.bw_average_gbps() > 0) {
    b.measured_gbps = t.bw_average_gbps();
    b.unit_read = t.unit() == "Gb/sec" ? "Gb/sec = 10^9 bit/s"
                                       : t.unit() + " = MiB/s by perftest's definition";
  } else if (t.bw_average_raw() > 0 && b.budget_gbps > 0 &&
             t.bw_average_raw() > 1.1 * b.budget_gbps) {
    // A value no link of this rate can carry in Gb/s is perftest's default, MiB/s.
    b.measured_gbps = t.bw_average_raw() * kPerftestMiBpsToGbps;
    b.unit_read = "unit not shown: read as MiB/s, perftest's default (too large for Gb/s)";
  }
  const std::string size = std::to_string(t.size_bytes()) + " B";
  if (b.rate_gbps <= 0) {
    b.not_judged =
        "no rate to judge against: the paste names no port with a rate (add the "
        "node's snapshot or ibstat, or give --expect-rate)";
  } else if (b.measured_gbps <= 0) {
    b.not_judged =
        "its unit is not shown (perftest's --out_json has none): give the command "
        "line or the text output";
  } else if (t.size_bytes() < kRdmaTestFillBytes) {
    b.not_judged = "its largest message is " + size + ": a link is filled only by messages of " +
                   std::to_string(kRdmaTestFillBytes) + " B or more";
  }
  return b;
}

std::vector<std::string> rdmaTestNotices(const v1::Snapshot& snap, const RuleOptions& o) {
  std::vector<std::string> out;
  for (const auto& t : snap.rdma_tests()) {
    if (!isBandwidthRun(t)) continue;  // a failed run is RDMA_TEST_FAILED; latency is not judged
    const auto b = rdmaTestBudget(snap, t, o);
    if (!b.not_judged.empty()) out.push_back(runName(t) + " not judged: " + b.not_judged);
  }
  return out;
}

namespace rules {

namespace {

std::vector<std::string> rdmaTestEvidence(const v1::RdmaTest& t, const RdmaTestBudget& b) {
  std::string run = !t.test().empty() ? t.test() : "perftest run";
  if (!t.role().empty()) run += ", " + t.role();
  if (!t.peer().empty()) run += " of " + t.peer();
  if (t.use_cuda()) run += ", GPU memory (--use_cuda)";
  std::vector<std::string> ev{
      run + ": BW average " + num(t.bw_average_raw()) + " " +
          (t.unit().empty() ? "(unit not shown)" : t.unit()) + " at " +
          std::to_string(t.size_bytes()) + " B = " + num(b.measured_gbps) + " Gb/s (" +
          b.unit_read + ")",
      "rate " + num(b.rate_gbps) + " Gb/s (" + b.rate_from + ")" +
          (t.bidirectional() ? ", both directions: " + num(b.budget_gbps) + " Gb/s" : "") +
          "; low under " + num(100 * kRdmaTestLowFraction) +
          " %: " + num(kRdmaTestLowFraction * b.budget_gbps) + " Gb/s"};
  if (!t.source().empty())
    ev.push_back("source " + t.source() + " line " + std::to_string(t.first_line()));
  return ev;
}

}  // namespace

// What a perftest error usually means, for the finding's summary.
std::string meaningOf(const std::string& error) {
  if (startsWith(error, "Couldn't connect to") || startsWith(error, "Unable to init the socket"))
    return "the server side was not listening or TCP to it is blocked";
  if (startsWith(error, "Unable to find the Infiniband/RoCE device") ||
      startsWith(error, "Did not detect devices"))
    return "no RDMA device was visible to it";
  if (startsWith(error, "Failed to modify QP") || startsWith(error, "Unable to Connect the HCA"))
    return "the queue pair could not reach the remote port (GID or path)";
  if (startsWith(error, "Completion with error") || startsWith(error, "Failed status"))
    return "a work request completed with an error";
  return "";
}

void failedRun(RuleContext& ctx, const v1::RdmaTest& t) {
  const std::string tool = !t.tool().empty() ? t.tool() : "perftest";
  std::string meaning;
  for (const auto& e : t.errors()) {
    if (meaning.empty()) meaning = meaningOf(e);
  }
  std::vector<std::string> ev;
  for (const auto& e : t.errors()) ev.push_back("perftest: " + e);
  std::string ends = t.role().empty() ? "" : t.role();
  if (!t.peer().empty()) ends += (ends.empty() ? "" : " of ") + t.peer();
  if (!t.device().empty()) ends += (ends.empty() ? "" : ", ") + std::string("device ") + t.device();
  if (!ends.empty()) ev.push_back("run: " + ends);
  if (!t.source().empty())
    ev.push_back("source " + t.source() + " line " + std::to_string(t.first_line()));
  ctx.add({FindingCode::RdmaTestFailed, Severity::Warning, ctx.node, t.device(), t.port(),
           tool + " did not run: " + t.errors(0) + (meaning.empty() ? "" : " (" + meaning + ")"),
           std::move(ev), std::string(findingTraits(FindingCode::RdmaTestFailed).next_step)});
}

void runRdmaTestRules(RuleContext& ctx) {
  for (const auto& t : ctx.snap.rdma_tests()) {
    if (!isBandwidthRun(t)) {
      if (!t.errors().empty() && t.rows() == 0) failedRun(ctx, t);
      continue;
    }
    const RdmaTestBudget b = rdmaTestBudget(ctx.snap, t, ctx.opts);
    if (!b.not_judged.empty() || b.measured_gbps >= kRdmaTestLowFraction * b.budget_gbps) continue;
    const std::string tool = !t.tool().empty() ? t.tool() : "perftest";
    const std::string where = t.device().empty() ? ""
                                                 : " on " + t.device() + " port " +
                                                       std::to_string(t.port() ? t.port() : 1);
    ctx.add({FindingCode::RdmaTestLowBw, Severity::Warning, ctx.node, t.device(),
             t.device().empty() ? 0u : (t.port() ? t.port() : 1u),
             tool + " measured " + num(b.measured_gbps) + " Gb/s" + where + ", " +
                 num(100 * b.measured_gbps / b.budget_gbps) + " % of the " + num(b.budget_gbps) +
                 " Gb/s the port carries (under " + num(100 * kRdmaTestLowFraction) + " % is low)",
             rdmaTestEvidence(t, b),
             std::string(findingTraits(FindingCode::RdmaTestLowBw).next_step)});
  }
}

}  // namespace rules

}  // namespace ibc::core
