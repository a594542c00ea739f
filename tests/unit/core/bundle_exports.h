#pragma once

// SYNTHETIC bundles for the bundle tests (bundle_test.cpp, bundle_verify_test.cpp,
// bundle_judgement_test.cpp, bundle_report_test.cpp): a broken VF and a healthy node as
// signed snapshots under a generated PKI, exported as a bundle, and the helpers that tamper
// with one, attach to it and say what its verification named.

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.h"
#include "ibc/core/bundle.h"
#include "ibc/core/encoding.h"
#include "ibc/core/json.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"
#include "test_pki.h"

namespace ibc::core::test_bundles {

namespace v1 = ::ibcollect::v1;

inline const std::string kNcclLog =
    "real/nccl-logs/nccl-log_ib-disabled-socket-over-ipoib_nccl-tests-issue-188.txt";

// A VF whose port is physically down (an escalation), with a real NCCL log that names its
// host ("user") and IP addresses. Synthetic identity fields, built here.
inline v1::Snapshot brokenVfSnapshot(const std::string& node) {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname(node + ".corp.example");
  s.mutable_node()->set_slurm_node(node);
  s.mutable_node()->set_job_id("4242");
  s.mutable_node()->set_vm_id("4c4c4544-0042-3510-8052-b7c04f4e3232");
  s.mutable_node()->set_vm_id_source("dmi product_uuid");
  s.mutable_node()->set_virtual_machine(true);
  s.mutable_node()->set_collected_at_unix_ms(1700000000000);
  auto* d = s.add_devices();
  d->set_name("mlx5_0");
  d->set_node_guid("0a7f:bc12:45ef:d23b");
  d->set_fw_ver("28.39.1002");
  d->set_node_desc(node + " mlx5_0");
  d->set_is_virtual_function(true);
  d->set_virtual_function_evidence("physfn link present");
  d->mutable_pci()->set_address("0000:0c:00.1");
  d->mutable_pci()->set_is_virtual_function(true);
  auto* p = d->add_ports();
  p->set_port(1);
  p->mutable_state()->set_code(1);
  p->mutable_state()->set_name("DOWN");
  p->mutable_state()->set_raw("1: DOWN");
  p->mutable_phys_state()->set_code(2);
  p->mutable_phys_state()->set_name("Polling");
  p->mutable_phys_state()->set_raw("2: Polling");
  p->set_link_layer("InfiniBand");
  p->set_port_guid("0a7f:bc12:45ef:d23c");
  p->add_gids("fe80:0000:0000:0000:0a7f:bc12:45ef:d23c");
  p->add_pkeys("0xffff");
  auto* log = s.add_nccl_logs();
  log->set_source("/home/jdoe/runs/nccl." + node + ".log");  // a host name inside a path
  log->set_raw(test::readFixture(kNcclLog));
  *log->mutable_parsed() = parseNcclLog(log->raw());
  return s;
}

inline v1::Snapshot healthySnapshot(const std::string& node) {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname(node);
  s.mutable_node()->set_job_id("4242");
  s.mutable_node()->set_collected_at_unix_ms(1700000060000);
  auto* d = s.add_devices();
  d->set_name("mlx5_0");
  auto* p = d->add_ports();
  p->set_port(1);
  p->mutable_state()->set_code(4);
  p->mutable_state()->set_name("ACTIVE");
  p->mutable_state()->set_raw("4: ACTIVE");
  p->mutable_phys_state()->set_code(5);
  p->mutable_phys_state()->set_name("LinkUp");
  p->mutable_phys_state()->set_raw("5: LinkUp");
  p->set_link_layer("InfiniBand");
  p->set_rate_raw("200 Gb/sec (4X HDR)");
  p->set_rate_gbps(200);
  return s;
}

struct Pki {
  test::TestCa ca = test::TestCa::create("bundle CA");
  test::TestCredential node01 = ca.issue(test::agentSpec("acme", "gpu07"));
  test::TestCredential node02 = ca.issue(test::agentSpec("acme", "gpu08"));
  test::TestCredential alice = ca.issue(test::supportSpec("alice"));
  test::TestCredential bob = ca.issue(test::supportSpec("bob"));
  test::TestCredential hank = ca.issue(test::providerSpec("hank"));
  // Another tenant's agent for a node of the same name: its key lives in a globex VM.
  test::TestCredential globex07 = ca.issue(test::agentSpec("globex", "gpu07"));
};

inline const Pki& pki() {
  static const Pki p;
  return p;
}

inline SnapshotSigner signerOf(const test::TestCredential& c) {
  auto s = SnapshotSigner::fromPem(c.certificate_pem, c.key_pem);
  EXPECT_TRUE(s.ok());
  return std::move(*s);
}

inline std::string signedFile(const v1::Snapshot& s, const test::TestCredential& c) {
  auto env = signerOf(c).sign(s);
  EXPECT_TRUE(env.ok());
  return encodeSnapshotFile(*env);
}

inline std::vector<BundleSnapshotInput> twoNodes() {
  return {{signedFile(brokenVfSnapshot("gpu07"), pki().node01), "a.ibsnap"},
          {signedFile(healthySnapshot("gpu08"), pki().node02), "b.ibsnap"}};
}

inline BundleMembers exported(bool redact = false) {
  BundleExportOptions o;
  o.case_id = "CASE-7";
  o.ibcollect_version = "test";
  o.created_unix_ms = 1700000100000;
  o.redact = redact;
  auto m = buildBundle(twoNodes(), o, signerOf(pki().alice));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : BundleMembers{};
}

inline BundleCheck verify(const BundleMembers& m) {
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  EXPECT_TRUE(v.ok());
  return verifyBundle(m, **v, std::chrono::system_clock::now());
}

inline std::string problems(const BundleCheck& c) {
  std::string out;
  for (const auto& p : c.problems) {
    out += p.member + " " + std::string(bundleProblemName(p.problem)) + ": " + p.message + "\n";
  }
  return out;
}

inline bool names(const BundleCheck& c, std::string_view member, BundleProblem problem) {
  for (const auto& p : c.problems) {
    if (p.member == member && p.problem == problem) return true;
  }
  return false;
}

inline std::unique_ptr<SignatureVerifier> verifier() {
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  EXPECT_TRUE(v.ok());
  return std::move(*v);
}

inline Result<std::string> attach(BundleMembers& m, const test::TestCredential& who,
                                  const std::string& host = "hv12",
                                  BundleCheck* verified = nullptr) {
  const std::string result = "{\"host\":\"" + host + "\",\"findings\":[]}";
  return attachHostResult(m, {host, result, 1700000200000}, signerOf(who), *verifier(),
                          std::chrono::system_clock::now(), verified);
}

// manifest.json re-rendered from `manifest` and signed by `who` (what a forger with that
// key does).
inline void resign(BundleMembers& m, const v1::BundleManifest& manifest,
                   const test::TestCredential& who) {
  m["manifest.json"] = renderManifest(manifest);
  m["manifest.sig"] = *signManifest(m["manifest.json"], signerOf(who));
}

// The manifest relisting every member with its current hash: the old --attach-to forgery.
inline v1::BundleManifest relisted(const BundleMembers& m) {
  auto manifest = *parseManifest(m.at("manifest.json"));
  manifest.clear_members();
  for (const auto& [name, bytes] : m) {
    if (name != "manifest.json" && name != "manifest.sig") {
      *manifest.add_members() = describeMember(name, bytes);
    }
  }
  return manifest;
}

// An attachment record written by hand: sequence `n` attaching `member`, chained to
// `previous`, signed by `who`.
inline void forgeAttachment(BundleMembers& m, uint32_t n, const std::string& member,
                            const std::string& bytes, const test::TestCredential& who,
                            const std::string& previous) {
  const auto signer = signerOf(who);
  v1::BundleAttachment r;
  r.set_member(member);
  r.set_host("hv66");
  r.mutable_attached_by()->set_subject(signer.identity().subject);
  r.mutable_attached_by()->set_tenant(signer.identity().tenant);
  r.mutable_attached_by()->set_role(std::string(certificateRoleName(signer.identity().role)));
  r.mutable_attached_by()->set_name(signer.identity().name);
  r.set_sequence(n);
  r.set_manifest_sha256(sha256Hex(m.at("manifest.json")));
  r.set_previous_sha256(previous);
  r.set_member_sha256(sha256Hex(bytes));
  r.set_member_size(bytes.size());
  m[member] = bytes;
  m[attachmentRecordName(n)] = messageToJson(r, 2) + "\n";
  m[attachmentSignatureName(n)] = *signManifest(m[attachmentRecordName(n)], signer);
}

// Every message naming `member` as `problem`, one a line.
inline std::string messageOf(const BundleCheck& c, std::string_view member, BundleProblem problem) {
  std::string out;
  for (const auto& p : c.problems) {
    if (p.member == member && p.problem == problem) out += p.message + "\n";
  }
  return out;
}

}  // namespace ibc::core::test_bundles
