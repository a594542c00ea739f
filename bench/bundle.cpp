// Benchmark (on demand, not in CI): `bundle export` and `bundle verify` of an N-node job
// through the library code the CLI calls — core::buildBundle + the libarchive writer, then
// the verifying reader (bundle::readVerifiedBundle) — for N = 250 ... max_nodes (default 2,000).
// Target (issue 13): export and verify of 2,000 nodes each under 2 s; prints the bundle size.
//
// The nodes are SYNTHETIC: snapshots collected from the real class-view captures in
// tests/fixtures/real/sysfs (mlx4 QDR, mlx5 VF with error counters, mlx4 with saturated
// counters), replicated with distinct node names, each signed by its own node certificate
// (an Ed25519 CA and N agent certificates made in memory with the test PKI code, not timed).
//
// usage: ibc_bench_bundle FIXTURES_DIR [max_nodes]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/snapshot_file.h"
#include "synthetic_job.h"
#include "test_pki.h"

using namespace ibc;
namespace v1 = ::ibcollect::v1;
using bench::ms;

int main(int argc, char** argv) {
  const auto args = bench::nodeBenchArgs(argc, argv);

  const auto ca = test::TestCa::create("bench CA");
  const auto support = ca.issue(test::supportSpec("bench"));
  auto exporter = core::SnapshotSigner::fromPem(support.certificate_pem, support.key_pem);
  auto verifier = core::SignatureVerifier::fromPem(ca.certificatePem());
  if (!exporter.ok() || !verifier.ok()) {
    std::fprintf(stderr, "PKI set-up failed\n");
    return 4;
  }

  std::printf(
      "bundle export/verify of N synthetic nodes (real captures replicated, each\n"
      "signed by its own node certificate)\n");
  std::printf("%8s %12s %12s %12s %12s %12s\n", "nodes", "export ms", "verify ms", "bytes",
              "members", "problems");
  std::vector<core::BundleSnapshotInput> inputs;
  for (int n = 250; n <= args.max_nodes; n *= 2) {
    while (static_cast<int>(inputs.size()) < n) {  // not timed
      const int i = static_cast<int>(inputs.size());
      const std::string name = bench::nodeName("node", i);
      v1::Snapshot s = bench::syntheticNode(args.templates, i, name, "4242");
      s.clear_window();  // a bundle of single samples, as before
      const auto cred = ca.issue(test::agentSpec("bench", name));
      auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
      auto signed_snapshot = signer->sign(s);
      inputs.push_back({core::encodeSnapshotFile(*signed_snapshot), name});
    }
    core::BundleExportOptions options;
    options.case_id = "case-bench";
    options.ibcollect_version = "bench";
    options.created_unix_ms = 1700000000000;

    const auto t0 = std::chrono::steady_clock::now();
    auto members = core::buildBundle(inputs, options, *exporter);
    if (!members.ok()) {
      std::fprintf(stderr, "export failed: %s\n", members.error().message.c_str());
      return 4;
    }
    auto archive = bundle::writeBundleArchive(*members, options.created_unix_ms / 1000);
    const auto t1 = std::chrono::steady_clock::now();
    if (!archive.ok()) {
      std::fprintf(stderr, "archive failed: %s\n", archive.error().message.c_str());
      return 4;
    }
    auto read = bundle::readVerifiedBundle(*archive, **verifier, std::chrono::system_clock::now());
    if (!read.ok()) {
      std::fprintf(stderr, "read failed: %s\n", read.error().message.c_str());
      return 4;
    }
    const auto& check = read->check;
    const auto t2 = std::chrono::steady_clock::now();
    std::printf("%8d %12.1f %12.1f %12zu %12zu %12zu\n", n, ms(t1 - t0), ms(t2 - t1),
                archive->size(), read->members.size(), check.problems.size());
    if (!check.ok()) {
      std::fprintf(stderr, "verify failed: %s\n", check.problems.front().message.c_str());
      return 4;
    }
  }
  return 0;
}
