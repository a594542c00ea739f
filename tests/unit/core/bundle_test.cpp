// The bundle format of DESIGN §8 over member bytes: build, verify (every failing member
// named), host results added and re-signed, redaction leaves no host name, IP or user name.

#include "ibc/core/bundle.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"
#include "test_pki.h"

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

TEST(Bundle, FindingsAreTheAnalyzeDocumentAndTheBrokenVfIsTheSuspect) {
  const auto m = exported();
  const std::string& findings = m.at("findings.json");
  EXPECT_NE(findings.find("\"nodes\""), std::string::npos);
  EXPECT_NE(findings.find("ESCALATE_HOST_INSPECTION"), std::string::npos);
  auto manifest = parseManifest(m.at("manifest.json"));
  ASSERT_TRUE(manifest.ok());
  ASSERT_EQ(manifest->nodes_size(), 2);
  EXPECT_TRUE(manifest->nodes(0).suspect());
  EXPECT_EQ(manifest->nodes(0).worst_severity(), "critical");
  EXPECT_FALSE(manifest->nodes(1).suspect());
  const std::string& pf = m.at("pf-inspection.json");
  EXPECT_NE(pf.find("0000:0c:00.1"), std::string::npos);
  EXPECT_NE(pf.find("4c4c4544-0042-3510-8052-b7c04f4e3232"), std::string::npos);
  const std::string& md = m.at("pf-inspection.md");
  EXPECT_NE(md.find("mlxlink -d <PF> -p 1 -m -c -e"), std::string::npos);
  EXPECT_NE(md.find("0a:7f:bc:12:45:ef:d2:3c"), std::string::npos) << md;
  EXPECT_NE(md.find("ipmitool sel list"), std::string::npos);
  EXPECT_EQ(md.find("gpu08"), std::string::npos) << "the healthy node is no suspect";
  EXPECT_NE(m.at("report.md").find("| gpu08 | ok |"), std::string::npos) << m.at("report.md");
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
  EXPECT_EQ(check.problems.size(), 1u) << problems(check);
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

TEST(Bundle, AHostResultIsAddedListedAndReSigned) {
  auto m = exported();
  const std::string result = "{\"host\":\"hv12\",\"findings\":[]}";
  ASSERT_TRUE(
      addHostMember(m, "host/hv12.json", result, "hv12", signerOf(pki().bob), 1700000200000).ok());
  auto check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  EXPECT_EQ(check.manifest_signature.signer.name, "bob");
  ASSERT_EQ(check.manifest->attachments_size(), 1);
  EXPECT_EQ(check.manifest->attachments(0).member(), "host/hv12.json");
  EXPECT_EQ(check.manifest->attachments(0).attached_by().name(), "bob");
  EXPECT_EQ(check.manifest->exporter().name(), "alice");
  // Attaching again replaces, never duplicates.
  ASSERT_TRUE(
      addHostMember(m, "host/hv12.json", result + " ", "hv12", signerOf(pki().bob), 1).ok());
  check = verify(m);
  EXPECT_TRUE(check.ok()) << problems(check);
  EXPECT_EQ(check.manifest->attachments_size(), 1);
  // Changed afterwards: named.
  m["host/hv12.json"] = "{}";
  EXPECT_TRUE(names(verify(m), "host/hv12.json", BundleProblem::HashMismatch));
  for (const char* bad : {"report.md", "host/../x.json", "/host/a.json", "host/a.txt", "host/"}) {
    EXPECT_FALSE(addHostMember(m, bad, "{}", "h", signerOf(pki().bob), 1).ok()) << bad;
  }
}

TEST(Bundle, MemberNamesMustBeSafe) {
  for (const char* ok : {"manifest.json", "snapshots/node-1.ibsnap", "host/hv.json"}) {
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
    EXPECT_NE(everything.find(s), std::string::npos) << s << " never appears unredacted";
  }
  const auto redacted = exported(true);
  EXPECT_TRUE(verify(redacted).ok()) << problems(verify(redacted));
  for (const auto& [name, bytes] : redacted) {
    EXPECT_EQ(name.find("snapshots/"), std::string::npos) << "signed snapshots are left out";
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
  EXPECT_NE(redacted.at("findings.json").find("ip-00"), std::string::npos);
  EXPECT_NE(redacted.at("report.md").find("node-001"), std::string::npos);
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
    EXPECT_EQ(md.find(placeholder), std::string::npos) << placeholder << "\n" << md;
  }
  EXPECT_NE(md.find("0000:0c:00.1"), std::string::npos) << md;
  // Placeholders in prose are code: a Markdown renderer would take a bare "<PF_NETDEV>" for
  // an HTML tag and hide it (and what follows).
  EXPECT_NE(md.find("the mst device `<PF>` of `<PF_PCI>`"), std::string::npos) << md;
  EXPECT_EQ(md.find(" <PF_NETDEV>,"), std::string::npos) << md;
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
  EXPECT_NE(again.differences[0].find(dropped.code()), std::string::npos) << again.differences[0];
  EXPECT_NE(again.differences[0].find("missing from findings.json"), std::string::npos);
}

TEST(BundleJudgement, ARedactedBundleSaysItCannotBeJudgedAgain) {
  const auto again = rejudgeBundle(exported(true));
  EXPECT_FALSE(again.judged);
  EXPECT_NE(again.reason.find("redacted"), std::string::npos) << again.reason;
}

}  // namespace
}  // namespace ibc::core
