#pragma once

// A small job as a support engineer receives it: a test PKI (test_pki.h) written to a temp dir
// (the acme tenant's CA; agents node01 and node02; support engineer alice; provider hank) and
// each node's snapshot collected by the agent's probes from a real fixture tree and signed by
// its own certificate: node01 is the mlx5_0 VF with hw_counters errors (a suspect for host
// inspection; the bundle-pf-* host trees host its VF), node02 the clean mlx4_0 QDR node.

#include <string>

#include "fixtures.h"
#include "os_doubles.h"
#include "signed_files.h"
#include "sysfs_json.h"
#include "test_pki.h"

namespace ibc::test {

struct SignedJob {
  std::string dir;
  TestCa ca = TestCa::create("acme CA");
  std::string ca_pem;
  TestCredential node01_credential, node02_credential, alice_credential;
  CredentialFiles node01, alice, hank;
  std::string node01_snapshot, node02_snapshot;  // .ibsnap files in `dir`
};

// A snapshot of the real tree `tree` (under tests/fixtures) naming `node` in `job`.
inline ::ibcollect::v1::Snapshot treeSnapshot(const std::string& tree, const std::string& node,
                                              const std::string& job) {
  FixedClock clock;
  auto s = collectFixtureTree(fixturePath(tree), clock);
  s.mutable_node()->set_hostname(node);
  s.mutable_node()->set_job_id(job);
  return s;
}

inline SignedJob makeSignedJob(const std::string& name) {
  SignedJob j;
  j.dir = makeTempDir(name);
  j.ca_pem = writeTestFile(j.dir + "/ca.pem", j.ca.certificatePem());
  j.node01_credential = j.ca.issue(agentSpec("acme", "node01"));
  j.node02_credential = j.ca.issue(agentSpec("acme", "node02"));
  j.alice_credential = j.ca.issue(supportSpec("alice"));
  j.node01 = writeCredential(j.dir, "node01", j.node01_credential);
  j.alice = writeCredential(j.dir, "alice", j.alice_credential);
  j.hank = writeCredential(j.dir, "hank", j.ca.issue(providerSpec("hank")));
  j.node01_snapshot = writeSnapshotFile(
      j.dir + "/node01.ibsnap",
      signedBy(j.node01_credential,
               treeSnapshot("real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/"
                            "fixtures",
                            "node01", "77")));
  j.node02_snapshot = writeSnapshotFile(
      j.dir + "/node02.ibsnap",
      signedBy(j.node02_credential,
               treeSnapshot("real/sysfs/sysfs_procfs-fixture_mlx4_0_ib-qdr-2port.tree/fixtures",
                            "node02", "77")));
  return j;
}

}  // namespace ibc::test
