// The bundle format of docs/formats.md over member bytes (bundle.cpp): build, who may sign
// what, host results attached with their own signed record (the exporter's signature
// untouched), safe member names, the manifest's parsing, redaction leaves no host name, IP or
// user name. Verification is bundle_verify_test.cpp's.

#include <gmock/gmock.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "bundle_exports.h"
#include "fixtures.h"
#include "ibc/core/bundle.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/bundle_report.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

using test_bundles::attach;
using test_bundles::exported;
using test_bundles::messageOf;
using test_bundles::names;
using test_bundles::pki;
using test_bundles::problems;
using test_bundles::signerOf;
using test_bundles::twoNodes;
using test_bundles::verify;

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

}  // namespace
}  // namespace ibc::core
