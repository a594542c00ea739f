#include "ibc/core/signing.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

struct FreeX509 {
  void operator()(X509* x) const { X509_free(x); }
};
struct FreePkey {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct FreeBio {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct FreeMdCtx {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct FreeStore {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct FreeStoreCtx {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct FreeX509Stack {
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }
};
using X509Ptr = std::unique_ptr<X509, FreeX509>;
using PkeyPtr = std::shared_ptr<EVP_PKEY>;
using BioPtr = std::unique_ptr<BIO, FreeBio>;

// The most recent OpenSSL error as text; clears the queue so it cannot leak into a later
// call's diagnosis.
std::string opensslError() {
  const unsigned long e = ERR_peek_last_error();
  std::string out = "unknown error";
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out = buf;
  }
  ERR_clear_error();
  return out;
}

BioPtr memoryBio(std::string_view bytes) {
  return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

// Never prompts for a passphrase on a terminal: encrypted keys fail to load instead.
int noPassphrase(char*, int, int, void*) { return 0; }

std::vector<X509Ptr> readPemCertificates(std::string_view pem) {
  std::vector<X509Ptr> out;
  if (pem.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return out;
  BioPtr bio = memoryBio(pem);
  if (!bio) return out;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, noPassphrase, nullptr)) {
    out.emplace_back(x);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  return out;
}

X509Ptr parseDer(std::string_view der) {
  if (der.empty() || der.size() > (1u << 20)) return nullptr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  X509Ptr x(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (x && p != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) x.reset();
  if (!x) ERR_clear_error();
  return x;
}

std::string toDer(X509* x) {
  const int n = i2d_X509(x, nullptr);
  if (n <= 0) return {};
  std::string out(static_cast<std::size_t>(n), '\0');
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  i2d_X509(x, &p);
  return out;
}

std::string oneLine(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio) return {};
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

// The single value of a subject attribute ("" when absent).
Result<std::string> subjectField(const X509_NAME* name, int nid, std::string_view label) {
  const int first = X509_NAME_get_index_by_NID(name, nid, -1);
  if (first < 0) return std::string();
  if (X509_NAME_get_index_by_NID(name, nid, first) >= 0) {
    return Error{ErrorCode::Malformed,
                 "certificate subject has more than one " + std::string(label) + " (ambiguous)"};
  }
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, first));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) {
    ERR_clear_error();
    return Error{ErrorCode::Malformed, "certificate subject " + std::string(label) + " unreadable"};
  }
  std::string value(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      return Error{ErrorCode::Malformed,
                   "certificate subject " + std::string(label) + " has control characters"};
    }
  }
  return value;
}

Result<CertificateIdentity> identityOf(const X509* x) {
  const X509_NAME* name = X509_get_subject_name(x);
  if (name == nullptr) return Error{ErrorCode::Malformed, "certificate has no subject"};
  auto tenant = subjectField(name, NID_organizationName, "O");
  if (!tenant.ok()) return tenant.error();
  auto role = subjectField(name, NID_organizationalUnitName, "OU");
  if (!role.ok()) return role.error();
  auto cn = subjectField(name, NID_commonName, "CN");
  if (!cn.ok()) return cn.error();
  CertificateIdentity id;
  id.tenant = std::move(*tenant);
  id.name = std::move(*cn);
  id.subject = oneLine(name);
  if (*role == "agent") {
    id.role = CertificateRole::Agent;
  } else if (*role == "support") {
    id.role = CertificateRole::Support;
  } else if (*role == "provider") {
    id.role = CertificateRole::Provider;
  } else if (*role == "collector") {
    id.role = CertificateRole::Collector;
  }
  return id;
}

std::string formatTime(std::time_t t) { return formatUtc(t); }

bool asn1Time(const ASN1_TIME* t, std::time_t& out) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return false;
  out = timegm(&tm);
  return true;
}

SignatureCheck fail(SignatureProblem problem, std::string message,
                    CertificateIdentity signer = {}) {
  SignatureCheck c;
  c.problem = problem;
  c.message = std::move(message);
  c.signer = std::move(signer);
  return c;
}

SignatureProblem problemForX509Error(int err) {
  switch (err) {
    case X509_V_ERR_CERT_HAS_EXPIRED: return SignatureProblem::CertificateExpired;
    case X509_V_ERR_CERT_NOT_YET_VALID: return SignatureProblem::CertificateNotYetValid;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_CERT_UNTRUSTED: return SignatureProblem::UnknownCa;
    default: return SignatureProblem::CertificateRejected;
  }
}

// Ed25519 over the whole message (no pre-hash: that is the algorithm's definition).
bool ed25519Verify(EVP_PKEY* key, std::string_view message, std::string_view signature) {
  std::unique_ptr<EVP_MD_CTX, FreeMdCtx> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key) != 1) {
    ERR_clear_error();
    return false;
  }
  const int rc = EVP_DigestVerify(
      ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
      reinterpret_cast<const unsigned char*>(message.data()), message.size());
  ERR_clear_error();
  return rc == 1;
}

}  // namespace

std::string_view certificateRoleName(CertificateRole role) {
  switch (role) {
    case CertificateRole::Agent: return "agent";
    case CertificateRole::Support: return "support";
    case CertificateRole::Provider: return "provider";
    case CertificateRole::Collector: return "collector";
    case CertificateRole::Other: return "other";
  }
  return "other";
}

std::string_view signatureProblemName(SignatureProblem problem) {
  switch (problem) {
    case SignatureProblem::None: return "ok";
    case SignatureProblem::Unsigned: return "unsigned";
    case SignatureProblem::UnsupportedAlgorithm: return "unsupported_algorithm";
    case SignatureProblem::MalformedChain: return "malformed_chain";
    case SignatureProblem::WrongKeyType: return "wrong_key_type";
    case SignatureProblem::UnknownCa: return "unknown_ca";
    case SignatureProblem::CertificateExpired: return "certificate_expired";
    case SignatureProblem::CertificateNotYetValid: return "certificate_not_yet_valid";
    case SignatureProblem::CertificateRejected: return "certificate_rejected";
    case SignatureProblem::BadSignature: return "bad_signature";
  }
  return "unknown";
}

Result<CertificateIdentity> certificateIdentity(std::string_view der) {
  X509Ptr x = parseDer(der);
  if (!x) return Error{ErrorCode::Malformed, "not a DER certificate"};
  return identityOf(x.get());
}

std::string snapshotNodeName(const v1::NodeIdentity& node) {
  return !node.slurm_node().empty() ? node.slurm_node() : node.hostname();
}

Status checkSignerNode(std::string_view snapshot_node, const CertificateIdentity& signer) {
  const auto dnsName = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    });
  };
  const auto firstLabel = [](std::string_view s) { return s.substr(0, s.find('.')); };
  const bool same = !snapshot_node.empty() && snapshot_node == signer.name;
  // A short CN also names its host's DNS names (node01 -> node01.cluster.local). A CN that is
  // itself a DNS name names only itself: CN=node01.a must not file snapshots as node01.b.
  const bool short_cn = signer.name.find('.') == std::string::npos;
  const bool same_host = short_cn && dnsName(snapshot_node) && dnsName(signer.name) &&
                         !firstLabel(snapshot_node).empty() &&
                         firstLabel(snapshot_node) == signer.name;
  if (same || same_host) return Status();
  return Error{ErrorCode::InvalidArgument,
               "the snapshot describes node '" + printable(snapshot_node) +
                   "' but is signed by the certificate of '" + printable(signer.name) +
                   "': only a node's own certificate may sign its snapshot"};
}

// ---- signing -------------------------------------------------------------------------------

struct SnapshotSigner::Key {
  PkeyPtr pkey;
};

SnapshotSigner::SnapshotSigner(std::shared_ptr<const Key> key, std::vector<std::string> chain_der,
                               CertificateIdentity identity)
    : key_(std::move(key)), chain_der_(std::move(chain_der)), identity_(std::move(identity)) {}

Result<SnapshotSigner> SnapshotSigner::fromPem(std::string_view certificate_pem,
                                               std::string_view key_pem) {
  auto certs = readPemCertificates(certificate_pem);
  if (certs.empty()) return Error{ErrorCode::Malformed, "no PEM certificate found"};
  BioPtr bio = memoryBio(key_pem);
  PkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, noPassphrase, nullptr) : nullptr,
              FreePkey{});
  if (!key) {
    return Error{
        ErrorCode::Malformed,
        "no readable PEM private key (encrypted keys are not supported): " + opensslError()};
  }
  if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519) {
    return Error{ErrorCode::Unsupported, std::string("private key is ") +
                                             OBJ_nid2sn(EVP_PKEY_get_id(key.get())) +
                                             ", snapshots are signed with Ed25519"};
  }
  if (X509_check_private_key(certs.front().get(), key.get()) != 1) {
    ERR_clear_error();
    return Error{ErrorCode::InvalidArgument, "the private key does not belong to the certificate"};
  }
  auto identity = identityOf(certs.front().get());
  if (!identity.ok()) return identity.error();
  std::vector<std::string> chain;
  for (std::size_t i = 0; i < certs.size(); ++i) {
    // Roots are the verifier's trust anchors, never part of what a signer presents.
    if (i > 0 && X509_check_issued(certs[i].get(), certs[i].get()) == X509_V_OK) continue;
    chain.push_back(toDer(certs[i].get()));
  }
  return SnapshotSigner(std::make_shared<Key>(Key{std::move(key)}), std::move(chain),
                        std::move(*identity));
}

Result<v1::SignedSnapshot> SnapshotSigner::sign(std::string snapshot_bytes) const {
  std::unique_ptr<EVP_MD_CTX, FreeMdCtx> ctx(EVP_MD_CTX_new());
  std::string signature(64, '\0');
  std::size_t length = signature.size();
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     reinterpret_cast<const unsigned char*>(snapshot_bytes.data()),
                     snapshot_bytes.size()) != 1) {
    return Error{ErrorCode::Io, "Ed25519 signing failed: " + opensslError()};
  }
  signature.resize(length);
  v1::SignedSnapshot env;
  env.set_snapshot(std::move(snapshot_bytes));
  env.set_signature_algorithm(std::string(kSignatureAlgorithmEd25519));
  env.set_signature(std::move(signature));
  for (const auto& der : chain_der_) env.add_certificate_chain(der);
  return env;
}

Result<v1::SignedSnapshot> SnapshotSigner::sign(const v1::Snapshot& snapshot) const {
  return sign(serializeSnapshot(snapshot));
}

// ---- verification --------------------------------------------------------------------------

namespace {

// A chain that verified: its key, who it names, and when the whole chain is valid.
struct VerifiedChain {
  PkeyPtr key;
  CertificateIdentity identity;
  std::time_t valid_from = 0;
  std::time_t valid_until = 0;
};

constexpr std::size_t kMaxCachedChains = 4096;

}  // namespace

struct SignatureVerifier::State {
  std::unique_ptr<X509_STORE, FreeStore> store;
  mutable std::mutex mutex;
  mutable std::unordered_map<std::string, std::shared_ptr<const VerifiedChain>> cache;
};

void precomputeCertificateCaches(X509_STORE* store) {
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(store);
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    X509* cert = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i));
    // Purpose -1: no check, only the extensions computed and cached.
    if (cert != nullptr) X509_check_purpose(cert, -1, 0);
  }
}

SignatureVerifier::SignatureVerifier(std::unique_ptr<State> state) : state_(std::move(state)) {}
SignatureVerifier::~SignatureVerifier() = default;

Result<std::unique_ptr<SignatureVerifier>> SignatureVerifier::fromPem(std::string_view ca_pem) {
  auto cas = readPemCertificates(ca_pem);
  if (cas.empty()) return Error{ErrorCode::Malformed, "no PEM certificate found in the CA file"};
  auto state = std::make_unique<State>();
  state->store.reset(X509_STORE_new());
  if (!state->store) return Error{ErrorCode::Io, "X509_STORE_new: " + opensslError()};
  for (auto& ca : cas) {
    if (X509_STORE_add_cert(state->store.get(), ca.get()) != 1) {
      return Error{ErrorCode::Malformed, "cannot add a CA certificate: " + opensslError()};
    }
  }
  precomputeCertificateCaches(state->store.get());
  return std::unique_ptr<SignatureVerifier>(new SignatureVerifier(std::move(state)));
}

namespace {

// What is wrong with the envelope's shape before any certificate is read, if anything.
std::optional<SignatureCheck> envelopeProblem(const v1::SignedSnapshot& envelope) {
  if (envelope.signature().empty()) {
    return fail(SignatureProblem::Unsigned,
                "the snapshot is not signed (take it with --cert and --key)");
  }
  if (envelope.signature_algorithm() != kSignatureAlgorithmEd25519) {
    return fail(SignatureProblem::UnsupportedAlgorithm,
                "signature algorithm '" + envelope.signature_algorithm().substr(0, 64) +
                    "' is not supported (ed25519 only)");
  }
  if (envelope.certificate_chain_size() == 0) {
    return fail(SignatureProblem::MalformedChain, "the envelope carries no certificate chain");
  }
  if (envelope.certificate_chain_size() > 8) {
    return fail(SignatureProblem::MalformedChain, "certificate chain longer than 8");
  }
  return std::nullopt;
}

// The verified-chain cache's key: the chain's certificates, each with its length.
std::string chainCacheKey(const v1::SignedSnapshot& envelope) {
  std::string key;
  for (const auto& der : envelope.certificate_chain()) {
    key += std::to_string(der.size());
    key += ':';
    key += der;
  }
  return key;
}

// X509_verify_cert's refusal in words, with the dates when a certificate is out of its
// validity window.
std::string chainErrorMessage(X509_STORE_CTX* ctx, const CertificateIdentity& leaf,
                              std::time_t when) {
  const int err = X509_STORE_CTX_get_error(ctx);
  X509* bad = X509_STORE_CTX_get_current_cert(ctx);
  std::string which = bad != nullptr ? oneLine(X509_get_subject_name(bad)) : leaf.subject;
  std::string message = "certificate " + which + ": " + X509_verify_cert_error_string(err);
  std::time_t t = 0;
  if (err == X509_V_ERR_CERT_HAS_EXPIRED && bad != nullptr &&
      asn1Time(X509_get0_notAfter(bad), t)) {
    message += " (expired " + formatTime(t) + ", checked at " + formatTime(when) + ")";
  } else if (err == X509_V_ERR_CERT_NOT_YET_VALID && bad != nullptr &&
             asn1Time(X509_get0_notBefore(bad), t)) {
    message += " (valid from " + formatTime(t) + ", checked at " + formatTime(when) + ")";
  }
  ERR_clear_error();
  return message;
}

// The leaf's key and identity with the window in which every certificate of the verified
// path is valid (a cached chain is reused only inside it).
std::shared_ptr<VerifiedChain> verifiedChain(X509_STORE_CTX* ctx, X509* leaf,
                                             const CertificateIdentity& identity) {
  auto verified = std::make_shared<VerifiedChain>();
  verified->key = PkeyPtr(X509_get_pubkey(leaf), FreePkey{});
  verified->identity = identity;
  verified->valid_from = std::numeric_limits<std::time_t>::min();
  verified->valid_until = std::numeric_limits<std::time_t>::max();
  STACK_OF(X509)* path = X509_STORE_CTX_get0_chain(ctx);
  for (int i = 0; path != nullptr && i < sk_X509_num(path); ++i) {
    std::time_t from = 0;
    std::time_t until = 0;
    X509* c = sk_X509_value(path, i);
    if (asn1Time(X509_get0_notBefore(c), from))
      verified->valid_from = std::max(verified->valid_from, from);
    if (asn1Time(X509_get0_notAfter(c), until))
      verified->valid_until = std::min(verified->valid_until, until);
  }
  return verified;
}

// Parses the envelope's chain and verifies it against `store` at `when`: the verified chain,
// or nullptr with `failure` saying why.
std::shared_ptr<VerifiedChain> verifyChain(const v1::SignedSnapshot& envelope, X509_STORE* store,
                                           std::time_t when, SignatureCheck& failure) {
  std::vector<X509Ptr> certs;
  for (int i = 0; i < envelope.certificate_chain_size(); ++i) {
    X509Ptr x = parseDer(envelope.certificate_chain(i));
    if (!x) {
      failure = fail(SignatureProblem::MalformedChain,
                     "certificate " + std::to_string(i) + " of the chain is not valid DER");
      return nullptr;
    }
    certs.push_back(std::move(x));
  }
  auto identity = identityOf(certs.front().get());
  if (!identity.ok()) {
    failure = fail(SignatureProblem::MalformedChain, identity.error().message);
    return nullptr;
  }
  EVP_PKEY* leaf_key = X509_get0_pubkey(certs.front().get());
  if (leaf_key == nullptr || EVP_PKEY_get_id(leaf_key) != EVP_PKEY_ED25519) {
    ERR_clear_error();
    const char* kind = leaf_key != nullptr ? OBJ_nid2sn(EVP_PKEY_get_id(leaf_key)) : "unreadable";
    failure =
        fail(SignatureProblem::WrongKeyType,
             "signer " + identity->subject + " has a " + kind + " key, not Ed25519", *identity);
    return nullptr;
  }
  std::unique_ptr<STACK_OF(X509), FreeX509Stack> untrusted(sk_X509_new_null());
  for (std::size_t i = 1; i < certs.size(); ++i) sk_X509_push(untrusted.get(), certs[i].get());
  std::unique_ptr<X509_STORE_CTX, FreeStoreCtx> ctx(X509_STORE_CTX_new());
  if (!ctx || !untrusted ||
      X509_STORE_CTX_init(ctx.get(), store, certs.front().get(), untrusted.get()) != 1) {
    failure = fail(SignatureProblem::CertificateRejected,
                   "cannot set up chain verification: " + opensslError(), *identity);
    return nullptr;
  }
  X509_STORE_CTX_set_time(ctx.get(), 0, when);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    failure =
        fail(problemForX509Error(err), chainErrorMessage(ctx.get(), *identity, when), *identity);
    return nullptr;
  }
  return verifiedChain(ctx.get(), certs.front().get(), *identity);
}

}  // namespace

SignatureCheck checkSignatureIntegrity(const v1::SignedSnapshot& envelope) {
  if (auto problem = envelopeProblem(envelope)) return std::move(*problem);
  X509Ptr leaf = parseDer(envelope.certificate_chain(0));
  if (!leaf)
    return fail(SignatureProblem::MalformedChain, "the signer's certificate is not valid DER");
  auto identity = identityOf(leaf.get());
  if (!identity.ok()) return fail(SignatureProblem::MalformedChain, identity.error().message);
  EVP_PKEY* key = X509_get0_pubkey(leaf.get());
  if (key == nullptr || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    ERR_clear_error();
    return fail(SignatureProblem::WrongKeyType,
                "the signer's certificate " + identity->subject + " is not an Ed25519 certificate",
                *identity);
  }
  if (!ed25519Verify(key, envelope.snapshot(), envelope.signature())) {
    return fail(SignatureProblem::BadSignature, "the signature does not match the snapshot bytes",
                *identity);
  }
  SignatureCheck ok;
  ok.signer = *identity;
  return ok;
}

SignatureCheck SignatureVerifier::verify(const v1::SignedSnapshot& envelope,
                                         std::chrono::system_clock::time_point at) const {
  if (auto problem = envelopeProblem(envelope)) return std::move(*problem);
  const std::time_t when = std::chrono::system_clock::to_time_t(at);
  std::string cache_key = chainCacheKey(envelope);
  std::shared_ptr<const VerifiedChain> chain;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->cache.find(cache_key);
    if (it != state_->cache.end()) chain = it->second;
  }
  if (chain && (when < chain->valid_from || when > chain->valid_until)) {
    chain.reset();  // outside the window: let the full check name what is wrong
  }
  if (!chain) {
    SignatureCheck failure;
    auto verified = verifyChain(envelope, state_->store.get(), when, failure);
    if (!verified) return failure;
    chain = verified;
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->cache.size() >= kMaxCachedChains) state_->cache.clear();
    state_->cache.emplace(std::move(cache_key), std::move(verified));
  }
  if (!ed25519Verify(chain->key.get(), envelope.snapshot(), envelope.signature())) {
    return fail(SignatureProblem::BadSignature,
                "the signature does not match the snapshot bytes (tampered or corrupted); signer " +
                    chain->identity.subject,
                chain->identity);
  }
  SignatureCheck ok;
  ok.signer = chain->identity;
  return ok;
}

}  // namespace ibc::core
