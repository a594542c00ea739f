// Benchmark (on demand, not in CI): the launcher side of `ibcollect --job` for N nodes —
// reassemble N nodes' step output, decode the snapshots, run every single-node rule and
// the cross-node comparison and hand each finding to its node (core::judgeJob, as
// the CLI does), build and render the report — timed for N = 250 ... 2,000 (or max_nodes).
//
// The nodes are SYNTHETIC: snapshots collected from the real class-view captures in
// tests/fixtures/real/sysfs (mlx4 QDR, mlx5 VF with error counters, mlx4 with saturated
// counters), replicated with distinct node names and a counter window (second sample
// = first sample, one node in 50 with a moved error counter).
//
// usage: ibc_bench_compare FIXTURES_DIR [max_nodes]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ibc/core/job_verdict.h"
#include "ibc/core/report.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/step_output.h"
#include "synthetic_job.h"

using namespace ibc;
namespace v1 = ::ibcollect::v1;
using bench::ms;

int main(int argc, char** argv) {
  const auto args = bench::nodeBenchArgs(argc, argv);

  std::printf("launcher-side --job pipeline on N synthetic nodes (real captures replicated)\n");
  std::printf("%8s %12s %12s %12s %12s %12s %10s\n", "nodes", "reassemble", "decode", "diagnose",
              "report", "total ms", "us/node");
  for (int n = 250; n <= args.max_nodes; n *= 2) {
    // Build the step output the nodes would send (not timed).
    std::vector<std::string> lines;
    for (int i = 0; i < n; ++i) {
      const std::string name = "node" + std::to_string(i);
      const v1::Snapshot s = bench::syntheticNode(args.templates, i, name, "");
      for (auto& l : core::encodeStepOutput(name, core::wrapUnsigned(s).SerializeAsString())) {
        l.pop_back();
        lines.push_back(std::move(l));
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    core::StepOutputCollector collector;
    for (const auto& l : lines) collector.addLine(l);
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<core::AnalyzedNode> nodes;
    nodes.reserve(static_cast<std::size_t>(n));
    for (const auto& [node, r] : collector.results()) {
      v1::SignedSnapshot env;
      env.ParseFromString(r.envelope);
      auto snap = core::openSnapshot(env);
      core::AnalyzedNode a;
      a.snapshot = std::move(snap).value();
      nodes.push_back(std::move(a));
    }
    const auto t2 = std::chrono::steady_clock::now();
    // What `ibcollect --job` and `ibcollect compare` run: every rule, then each finding
    // handed to the node it names.
    core::judgeJob(nodes, {});
    const auto t3 = std::chrono::steady_clock::now();
    std::size_t findings_count = 0;
    for (const auto& a : nodes) findings_count += a.findings.size();
    const auto report = core::buildReport(std::move(nodes));
    core::TextOptions to;
    to.node_table = true;
    const std::string text = core::renderText(report, to);
    const auto t4 = std::chrono::steady_clock::now();
    std::printf("%8d %12.1f %12.1f %12.1f %12.1f %12.1f %10.1f   (%zu findings, %zu KiB of text)\n",
                n, ms(t1 - t0), ms(t2 - t1), ms(t3 - t2), ms(t4 - t3), ms(t4 - t0),
                ms(t4 - t0) * 1000.0 / n, findings_count, text.size() / 1024);
    if (n < args.max_nodes && n * 2 > args.max_nodes)
      n = args.max_nodes / 2;  // end exactly at max_nodes
  }
  return 0;
}
