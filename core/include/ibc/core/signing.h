#pragma once

// Signed snapshots (docs/formats.md, docs/security.md): an Ed25519 signature over the serialized
// Snapshot bytes, with the signer's DER certificate chain embedded in the `SignedSnapshot`
// envelope, verifiable offline against a CA. Pure: PEM/DER bytes in, results out; callers
// read the files. Verification never parses the Snapshot inside the envelope.
//
// Identity convention (certs/README.md): certificate subject O = tenant, OU = role
// (`agent`, `support`, `provider`, `collector`), CN = node or person.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"
#include "ibcollect/v1/signed.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

struct x509_store_st;  // OpenSSL's X509_STORE

namespace ibc::core {

inline constexpr std::string_view kSignatureAlgorithmEd25519 = "ed25519";

// Agent: a tenant's node (signs its snapshots); Support: a support engineer (exports
// bundles, reads every tenant); Provider: a provider host engineer (signs host-side results
// attached to a bundle); Collector: the collector's server certificate.
enum class CertificateRole { Agent, Support, Provider, Collector, Other };

// "agent", "support", "provider", "collector", "other".
std::string_view certificateRoleName(CertificateRole role);

// Who a certificate names.
struct CertificateIdentity {
  std::string tenant;  // subject O
  CertificateRole role = CertificateRole::Other;
  std::string name;     // subject CN: node name for agents, person for support and provider
  std::string subject;  // the whole subject, RFC 2253 one-line form, for logs
};

// The identity in a DER certificate. A subject with more than one O, OU or CN, or with
// control characters in them, is ambiguous. Errors: Malformed (not DER, ambiguous).
Result<CertificateIdentity> certificateIdentity(std::string_view der);

// The node a snapshot describes (docs/security.md): its Slurm node name, else its hostname.
std::string snapshotNodeName(const ::ibcollect::v1::NodeIdentity& node);

// Only a node's own certificate may sign its snapshot (docs/security.md). The snapshot's node must
// be the signer's CN, or, when the CN is a single label, a DNS name whose first label is the
// CN (a hostname "node01.cluster.local" signed by CN=node01). A CN with dots must match
// exactly: CN=node01.a cannot sign for node01.b. Anything else — another node, an empty
// name, path separators, control characters — is refused. Errors: InvalidArgument naming
// both names (escaped for printing).
Status checkSignerNode(std::string_view snapshot_node, const CertificateIdentity& signer);

// A node's signing identity: its Ed25519 private key and certificate chain. Immutable
// once made; safe to use from several threads.
class SnapshotSigner {
 public:
  // `certificate_pem`: the signer's certificate first, then any intermediates (a
  // self-signed root in the file is left out of the embedded chain). `key_pem`: the
  // matching private key (PKCS#8 or traditional PEM). Errors: Malformed (no certificate
  // or key in the PEM), Unsupported (key is not Ed25519), InvalidArgument (the key does
  // not belong to the certificate).
  static Result<SnapshotSigner> fromPem(std::string_view certificate_pem, std::string_view key_pem);

  // Signs exactly `snapshot_bytes` (use serializeSnapshot() for a Snapshot) and embeds the
  // chain. Errors: Io (the crypto library failed).
  Result<::ibcollect::v1::SignedSnapshot> sign(std::string snapshot_bytes) const;
  Result<::ibcollect::v1::SignedSnapshot> sign(const ::ibcollect::v1::Snapshot& snapshot) const;

  const CertificateIdentity& identity() const { return identity_; }

 private:
  struct Key;
  SnapshotSigner(std::shared_ptr<const Key> key, std::vector<std::string> chain_der,
                 CertificateIdentity identity);
  std::shared_ptr<const Key> key_;
  std::vector<std::string> chain_der_;
  CertificateIdentity identity_;
};

// What failed when a signed snapshot does not verify. Checks run in this order and the
// first failure is reported: envelope (unsigned, algorithm), chain structure, signer key
// type, chain trust and validity at the given time, then the signature itself.
enum class SignatureProblem {
  None,
  Unsigned,                // no signature (an unsigned snapshot)
  UnsupportedAlgorithm,    // signature_algorithm other than "ed25519"
  MalformedChain,          // no certificate, undecodable DER, ambiguous subject
  WrongKeyType,            // the signer's key is not Ed25519
  UnknownCa,               // the chain does not lead to a trusted CA
  CertificateExpired,      // a certificate of the chain expired before the time checked
  CertificateNotYetValid,  // ... or was not yet valid
  CertificateRejected,     // any other chain failure (constraints, purpose, ...)
  BadSignature,            // the signature does not match the snapshot bytes
};

// Stable short name: "unsigned", "bad_signature", "unknown_ca", ...
std::string_view signatureProblemName(SignatureProblem problem);

struct SignatureCheck {
  SignatureProblem problem = SignatureProblem::None;
  // For people: what failed and the detail ("certificate CN=node01 expired 2024-01-02").
  std::string message;
  // Filled whenever the signer's certificate parsed, including on failure.
  CertificateIdentity signer;
  bool ok() const { return problem == SignatureProblem::None; }
};

// The signature against the signer's own certificate only, with no CA: whether the bytes are
// the ones the holder of that certificate signed (a file changed after signing fails), not
// who the signer is. For a viewer without a CA; SignatureVerifier::verify is the trust check.
// Problems: Unsigned, UnsupportedAlgorithm, MalformedChain, WrongKeyType, BadSignature.
SignatureCheck checkSignatureIntegrity(const ::ibcollect::v1::SignedSnapshot& envelope);

// OpenSSL 3.0 (Debian 12) computes a certificate's cached extensions (key identifiers,
// purposes) lazily on first use, and two threads verifying against the same CA at once race
// there: ThreadSanitizer saw one write a CA's key identifier under the certificate's lock
// while another read it. Computes them now, on the calling thread, for every certificate in
// `store` (an X509_STORE); call it before the store is shared between threads.
void precomputeCertificateCaches(x509_store_st* store);

// Trusted CAs and a bounded cache of certificate chains already verified (a chain is
// checked once, then only its validity window; the signature is checked every time).
// Thread-safe: verify() may run concurrently.
class SignatureVerifier {
 public:
  // `ca_pem`: one or more CA certificates. Errors: Malformed (no certificate in the PEM).
  static Result<std::unique_ptr<SignatureVerifier>> fromPem(std::string_view ca_pem);
  ~SignatureVerifier();
  SignatureVerifier(const SignatureVerifier&) = delete;
  SignatureVerifier& operator=(const SignatureVerifier&) = delete;

  // Verifies `envelope` as of time `at` (certificate validity is judged at that time).
  SignatureCheck verify(const ::ibcollect::v1::SignedSnapshot& envelope,
                        std::chrono::system_clock::time_point at) const;

 private:
  struct State;
  explicit SignatureVerifier(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ibc::core
