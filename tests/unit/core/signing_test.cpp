#include "ibc/core/signing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"
#include "test_pki.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;
using std::chrono::hours;
using test::agentSpec;
using test::TestCa;

v1::Snapshot sampleSnapshot() {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("node01");
  s.mutable_node()->set_job_id("4242");
  s.mutable_node()->set_collected_at_unix_ms(1700000000000);
  return s;
}

const std::chrono::system_clock::time_point kNow = std::chrono::system_clock::now();

struct Pki {
  TestCa ca = TestCa::create("signing CA");
  test::TestCredential agent = ca.issue(agentSpec("acme", "node01"));
  std::unique_ptr<SignatureVerifier> verifier =
      SignatureVerifier::fromPem(ca.certificatePem()).value();
};

Pki& pki() {
  static Pki p;
  return p;
}

v1::SignedSnapshot signWith(const test::TestCredential& cred) {
  auto signer = SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
  EXPECT_TRUE(signer.ok()) << (signer.ok() ? "" : signer.error().message);
  auto env = signer->sign(sampleSnapshot());
  EXPECT_TRUE(env.ok());
  return *env;
}

TEST(Signing, SignedSnapshotVerifiesAndNamesTheSigner) {
  const auto env = signWith(pki().agent);
  EXPECT_EQ(env.signature_algorithm(), "ed25519");
  EXPECT_EQ(env.signature().size(), 64u);
  ASSERT_EQ(env.certificate_chain_size(), 1);
  EXPECT_EQ(env.snapshot(), serializeSnapshot(sampleSnapshot()));
  const auto check = pki().verifier->verify(env, kNow);
  EXPECT_TRUE(check.ok()) << check.message;
  EXPECT_EQ(check.signer.tenant, "acme");
  EXPECT_EQ(check.signer.role, CertificateRole::Agent);
  EXPECT_EQ(check.signer.name, "node01");
  EXPECT_THAT(check.signer.subject, HasSubstr("CN=node01"));
  // Twice: the second check runs from the chain cache and must agree.
  EXPECT_TRUE(pki().verifier->verify(env, kNow).ok());
}

TEST(Signing, SurvivesTheSnapshotFileRoundTrip) {
  const auto env = signWith(pki().agent);
  auto back = decodeSnapshotFile(encodeSnapshotFile(env));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(pki().verifier->verify(*back, kNow).ok());
  EXPECT_EQ(snapshotId(*back), snapshotId(env));
}

TEST(Signing, TamperedSnapshotBytesAreABadSignature) {
  auto env = signWith(pki().agent);
  ASSERT_TRUE(pki().verifier->verify(env, kNow).ok());  // chain now cached
  std::string bytes = env.snapshot();
  bytes[bytes.size() / 2] ^= 0x01;
  env.set_snapshot(bytes);
  const auto check = pki().verifier->verify(env, kNow);
  EXPECT_EQ(check.problem, SignatureProblem::BadSignature);
  EXPECT_THAT(check.message, HasSubstr("does not match"));
  EXPECT_EQ(check.signer.name, "node01");
}

TEST(Signing, WithoutACaOnlyIntegrityIsCheckedAgainstTheSignersOwnCertificate) {
  auto env = signWith(pki().agent);
  const auto intact = checkSignatureIntegrity(env);
  EXPECT_TRUE(intact.ok()) << intact.message;
  EXPECT_EQ(intact.signer.name, "node01");
  env.mutable_snapshot()->back() ^= 0x01;
  EXPECT_EQ(checkSignatureIntegrity(env).problem, SignatureProblem::BadSignature);
  env.clear_signature();
  EXPECT_EQ(checkSignatureIntegrity(env).problem, SignatureProblem::Unsigned);
}

TEST(Signing, TamperedSignatureIsABadSignature) {
  auto env = signWith(pki().agent);
  std::string sig = env.signature();
  sig[0] ^= 0x80;
  env.set_signature(sig);
  EXPECT_EQ(pki().verifier->verify(env, kNow).problem, SignatureProblem::BadSignature);
  env.set_signature(sig.substr(0, 10));
  EXPECT_EQ(pki().verifier->verify(env, kNow).problem, SignatureProblem::BadSignature);
}

TEST(Signing, CertificateOfAnotherCaIsAnUnknownCa) {
  TestCa other = TestCa::create("other CA");
  const auto env = signWith(other.issue(agentSpec("acme", "node01")));
  const auto check = pki().verifier->verify(env, kNow);
  EXPECT_EQ(check.problem, SignatureProblem::UnknownCa);
  EXPECT_THAT(check.message, HasSubstr("issuer"));
  EXPECT_EQ(check.signer.tenant, "acme");
}

TEST(Signing, ExpiredAndNotYetValidCertificatesAreNamedWithTheirDates) {
  auto spec = agentSpec("acme", "old");
  spec.not_before = kNow - hours(48);
  spec.not_after = kNow - hours(24);
  const auto expired = signWith(pki().ca.issue(spec));
  const auto e = pki().verifier->verify(expired, kNow);
  EXPECT_EQ(e.problem, SignatureProblem::CertificateExpired);
  EXPECT_THAT(e.message, HasSubstr("expired"));
  EXPECT_THAT(e.message, HasSubstr("CN=old"));
  // The same envelope verifies at a time the certificate was valid.
  EXPECT_TRUE(pki().verifier->verify(expired, kNow - hours(36)).ok());
  // ... and a cached chain is re-judged at a time outside its window.
  EXPECT_EQ(pki().verifier->verify(expired, kNow).problem, SignatureProblem::CertificateExpired);

  spec.not_before = kNow + hours(24);
  spec.not_after = kNow + hours(48);
  const auto future = signWith(pki().ca.issue(spec));
  const auto f = pki().verifier->verify(future, kNow);
  EXPECT_EQ(f.problem, SignatureProblem::CertificateNotYetValid);
  EXPECT_THAT(f.message, HasSubstr("valid from"));
}

TEST(Signing, NonEd25519KeysAreRefusedForSigningAndVerification) {
  auto spec = agentSpec("acme", "ec-node");
  spec.key = test::TestKeyType::EcP256;
  const auto ec = pki().ca.issue(spec);
  auto signer = SnapshotSigner::fromPem(ec.certificate_pem, ec.key_pem);
  ASSERT_FALSE(signer.ok());
  EXPECT_EQ(signer.error().code, ErrorCode::Unsupported);
  EXPECT_THAT(signer.error().message, HasSubstr("Ed25519"));

  auto env = signWith(pki().agent);
  env.set_certificate_chain(0, ec.certificate_der);
  const auto check = pki().verifier->verify(env, kNow);
  EXPECT_EQ(check.problem, SignatureProblem::WrongKeyType);
  EXPECT_THAT(check.message, HasSubstr("not Ed25519"));
}

TEST(Signing, KeyOfAnotherCertificateIsRefused) {
  const auto other = pki().ca.issue(agentSpec("acme", "node02"));
  auto signer = SnapshotSigner::fromPem(pki().agent.certificate_pem, other.key_pem);
  ASSERT_FALSE(signer.ok());
  EXPECT_EQ(signer.error().code, ErrorCode::InvalidArgument);
}

TEST(Signing, GarbageInputsAreNamed) {
  EXPECT_EQ(SnapshotSigner::fromPem("", "").error().code, ErrorCode::Malformed);
  EXPECT_EQ(SnapshotSigner::fromPem(pki().agent.certificate_pem, "garbage").error().code,
            ErrorCode::Malformed);
  EXPECT_FALSE(SignatureVerifier::fromPem("not a pem").ok());

  auto env = signWith(pki().agent);
  v1::SignedSnapshot unsigned_env = wrapUnsigned(sampleSnapshot());
  EXPECT_EQ(pki().verifier->verify(unsigned_env, kNow).problem, SignatureProblem::Unsigned);

  auto rsa = env;
  rsa.set_signature_algorithm("rsa-pss");
  EXPECT_EQ(pki().verifier->verify(rsa, kNow).problem, SignatureProblem::UnsupportedAlgorithm);

  auto no_chain = env;
  no_chain.clear_certificate_chain();
  EXPECT_EQ(pki().verifier->verify(no_chain, kNow).problem, SignatureProblem::MalformedChain);

  auto bad_der = env;
  bad_der.set_certificate_chain(0, "\x30\x82garbage");
  const auto check = pki().verifier->verify(bad_der, kNow);
  EXPECT_EQ(check.problem, SignatureProblem::MalformedChain);
  EXPECT_THAT(check.message, HasSubstr("not valid DER"));

  auto trailing = env;
  trailing.set_certificate_chain(0, env.certificate_chain(0) + "x");
  EXPECT_EQ(pki().verifier->verify(trailing, kNow).problem, SignatureProblem::MalformedChain);
}

TEST(Signing, AmbiguousSubjectsAreMalformed) {
  // Two OUs would let a certificate claim two roles.
  auto spec = agentSpec("acme", "node01");
  spec.extra_subject = {{"OU", "support"}};
  const auto two_roles = pki().ca.issue(spec);
  auto id = certificateIdentity(two_roles.certificate_der);
  ASSERT_FALSE(id.ok());
  EXPECT_THAT(id.error().message, HasSubstr("more than one OU"));
  auto env = signWith(pki().agent);
  env.set_certificate_chain(0, two_roles.certificate_der);
  EXPECT_EQ(pki().verifier->verify(env, kNow).problem, SignatureProblem::MalformedChain);

  spec.name = "";
  spec.extra_subject = {{"CN", "bad\x01name"}};
  EXPECT_FALSE(certificateIdentity(pki().ca.issue(spec).certificate_der).ok());
  EXPECT_FALSE(certificateIdentity("junk").ok());

  auto support = certificateIdentity(pki().ca.issue(test::supportSpec("alice")).certificate_der);
  ASSERT_TRUE(support.ok());
  EXPECT_EQ(support->role, CertificateRole::Support);
  EXPECT_EQ(certificateRoleName(support->role), "support");

  auto provider = certificateIdentity(pki().ca.issue(test::providerSpec("hank")).certificate_der);
  ASSERT_TRUE(provider.ok());
  EXPECT_EQ(provider->role, CertificateRole::Provider);
  EXPECT_EQ(certificateRoleName(provider->role), "provider");
  EXPECT_EQ(provider->name, "hank");
  EXPECT_EQ(provider->tenant, "ibcollect");
}

TEST(Signing, ProblemNamesAreStable) {
  EXPECT_EQ(signatureProblemName(SignatureProblem::BadSignature), "bad_signature");
  EXPECT_EQ(signatureProblemName(SignatureProblem::UnknownCa), "unknown_ca");
  EXPECT_EQ(signatureProblemName(SignatureProblem::CertificateExpired), "certificate_expired");
  EXPECT_EQ(signatureProblemName(SignatureProblem::Unsigned), "unsigned");
}

// The identity of acme's agent certificate with CN `name`.
CertificateIdentity acmeAgent(const std::string& name) {
  CertificateIdentity id;
  id.tenant = "acme";
  id.role = CertificateRole::Agent;
  id.name = name;
  return id;
}

// Issue 11 #7: only a node's own certificate may sign its snapshot. node01's certificate
// cannot file a snapshot as another node, a path, or a name carrying escape codes.
TEST(Signing, OnlyTheNodesOwnCertificateMaySignItsSnapshot) {
  const CertificateIdentity node01 = acmeAgent("node01");
  EXPECT_TRUE(checkSignerNode("node01", node01).ok());
  // A hostname whose first label is the CN (gethostname() giving an FQDN) is the same node.
  EXPECT_TRUE(checkSignerNode("node01.cluster.local", node01).ok());
  for (const std::string_view other :
       {std::string_view("node02"), std::string_view("../../x"), std::string_view("/abs"),
        std::string_view("node01/../node02"), std::string_view("node010"),
        std::string_view("Node01"), std::string_view(""), std::string_view("\x1b[2Jnode01"),
        std::string_view("node01\x1b[0m"), std::string_view("node01\n"),
        std::string_view("node02.node01"), std::string_view(".node01")}) {
    const auto st = checkSignerNode(other, node01);
    ASSERT_FALSE(st.ok()) << "accepted '" << printable(other) << "'";
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
    EXPECT_THAT(st.error().message, HasSubstr("only a node's own certificate"));
    // The message prints both names without the raw escape byte.
    EXPECT_THAT(st.error().message, HasSubstr("'node01'"));
    EXPECT_THAT(st.error().message, Not(HasSubstr("\x1b")));
    EXPECT_THAT(st.error().message, Not(HasSubstr("\n")));
  }
}

// A CN that is a DNS name names only itself: the first label alone does not make two
// hosts one node (before: CN=node01.a could sign for node01.b and for node01).
TEST(Signing, ACertificateNamedByItsFqdnSignsOnlyForThatName) {
  const CertificateIdentity fqdn = acmeAgent("node01.a.example");
  EXPECT_TRUE(checkSignerNode("node01.a.example", fqdn).ok());
  EXPECT_FALSE(checkSignerNode("node01.b.example", fqdn).ok());
  EXPECT_FALSE(checkSignerNode("node01", fqdn).ok());
  EXPECT_FALSE(checkSignerNode("node01.a", fqdn).ok());
}

TEST(Signing, SnapshotNodeNameIsTheSlurmNodeElseTheHostname) {
  v1::NodeIdentity n;
  n.set_hostname("host7.example");
  EXPECT_EQ(snapshotNodeName(n), "host7.example");
  n.set_slurm_node("node07");
  EXPECT_EQ(snapshotNodeName(n), "node07");
}

// Issue 11 #8: what is accepted is exactly what was signed plus the signature and chain.
TEST(Signing, EnvelopesWithUnknownFieldsOrNonCanonicalEncodingsAreRefused) {
  const v1::SignedSnapshot env = signWith(pki().agent);
  const std::string canonical = env.SerializeAsString();
  auto ok = parseSignedEnvelope(canonical);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->snapshot(), env.snapshot());

  // 1 MiB appended as field 99 (length-delimited): still verifies by signature alone,
  // but no signature covers it.
  std::string padded = canonical;
  std::string tail;
  {
    google::protobuf::io::StringOutputStream stream(&tail);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
        99, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    const std::string mib(1 << 20, 'x');
    out.WriteVarint32(static_cast<uint32_t>(mib.size()));
    out.WriteString(mib);
  }
  padded += tail;  // the CodedOutputStream flushed into `tail` when it went out of scope
  auto unknown = parseSignedEnvelope(padded);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::Malformed);
  EXPECT_THAT(unknown.error().message, HasSubstr("1 unknown field(s)"));
  EXPECT_THAT(unknown.error().message, HasSubstr("1048576 bytes"));

  // The same envelope with its signature field repeated (the last one wins when parsing):
  // another byte string meaning one envelope.
  std::string repeated = canonical;
  {
    v1::SignedSnapshot sig_only;
    sig_only.set_signature(env.signature());
    repeated += sig_only.SerializeAsString();
  }
  auto parsed_repeat = parseSignedEnvelope(repeated);
  ASSERT_FALSE(parsed_repeat.ok());
  EXPECT_THAT(parsed_repeat.error().message, HasSubstr("canonical"));

  // Reordered fields: the chain first, then the rest.
  std::string reordered;
  {
    v1::SignedSnapshot chain_only;
    *chain_only.mutable_certificate_chain() = env.certificate_chain();
    v1::SignedSnapshot rest = env;
    rest.clear_certificate_chain();
    reordered = chain_only.SerializeAsString() + rest.SerializeAsString();
  }
  ASSERT_EQ(reordered.size(), canonical.size());
  ASSERT_NE(reordered, canonical);
  auto parsed_reorder = parseSignedEnvelope(reordered);
  ASSERT_FALSE(parsed_reorder.ok());
  EXPECT_THAT(parsed_reorder.error().message, HasSubstr("canonical"));
}

}  // namespace
}  // namespace ibc::core
