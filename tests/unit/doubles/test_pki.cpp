#include "test_pki.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>

namespace ibc::test {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "test_pki: %s failed\n", what);
  std::abort();
}

using Pkey = std::shared_ptr<EVP_PKEY>;
using Cert = std::shared_ptr<X509>;

Pkey newKey(TestKeyType type) {
  EVP_PKEY* k = type == TestKeyType::Ed25519 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")
                                             : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (k == nullptr) die("key generation");
  return Pkey(k, EVP_PKEY_free);
}

std::string bioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

std::string certPem(X509* x) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, x);
  return bioText(bio);
}

std::string keyPem(EVP_PKEY* k) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, k, nullptr, nullptr, 0, nullptr, nullptr);
  return bioText(bio);
}

std::string certDer(X509* x) {
  const int n = i2d_X509(x, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  auto* p = reinterpret_cast<unsigned char*>(out.data());
  i2d_X509(x, &p);
  return out;
}

void addExtension(X509* x, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, x, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) die("extension");
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
}

void addName(X509_NAME* name, const char* field, const std::string& value) {
  if (value.empty()) return;
  X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
}

Cert newCert(EVP_PKEY* subject_key, X509_NAME* subject, X509* issuer, EVP_PKEY* issuer_key,
             std::chrono::system_clock::time_point from, std::chrono::system_clock::time_point to,
             const std::vector<std::pair<int, std::string>>& extensions) {
  Cert x(X509_new(), X509_free);
  X509_set_version(x.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);
  ASN1_TIME_set(X509_getm_notBefore(x.get()), std::chrono::system_clock::to_time_t(from));
  ASN1_TIME_set(X509_getm_notAfter(x.get()), std::chrono::system_clock::to_time_t(to));
  X509_set_subject_name(x.get(), subject);
  X509_set_issuer_name(x.get(), issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  X509_set_pubkey(x.get(), subject_key);
  for (const auto& [nid, value] : extensions) {
    addExtension(x.get(), issuer != nullptr ? issuer : x.get(), nid, value);
  }
  if (X509_sign(x.get(), issuer_key, nullptr) == 0) die("X509_sign");
  return x;
}

}  // namespace

struct TestCa::State {
  Pkey key;
  Cert cert;
};

TestCa TestCa::create(const std::string& name) {
  auto state = std::make_shared<State>();
  state->key = newKey(TestKeyType::Ed25519);
  X509_NAME* subject = X509_NAME_new();
  addName(subject, "O", "ibcollect");
  addName(subject, "OU", "ca");
  addName(subject, "CN", name);
  const auto now = std::chrono::system_clock::now();
  state->cert = newCert(state->key.get(), subject, nullptr, state->key.get(),
                        now - std::chrono::hours(24 * 365), now + std::chrono::hours(24 * 3650),
                        {{NID_basic_constraints, "critical,CA:TRUE"},
                         {NID_key_usage, "critical,keyCertSign,cRLSign"},
                         {NID_subject_key_identifier, "hash"}});
  X509_NAME_free(subject);
  TestCa ca;
  ca.pem_ = certPem(state->cert.get());
  ca.state_ = std::move(state);
  return ca;
}

TestCa TestCa::fromPem(std::string_view certificate_pem, std::string_view key_pem) {
  auto state = std::make_shared<State>();
  BIO* cb = BIO_new_mem_buf(certificate_pem.data(), static_cast<int>(certificate_pem.size()));
  state->cert = Cert(PEM_read_bio_X509(cb, nullptr, nullptr, nullptr), X509_free);
  BIO_free(cb);
  BIO* kb = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  state->key = Pkey(PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr), EVP_PKEY_free);
  BIO_free(kb);
  if (!state->cert || !state->key) die("loading the CA");
  TestCa ca;
  ca.pem_ = std::string(certificate_pem);
  ca.state_ = std::move(state);
  return ca;
}

TestCredential TestCa::issue(const CertificateSpec& spec) const {
  Pkey key = newKey(spec.key);
  X509_NAME* subject = X509_NAME_new();
  addName(subject, "O", spec.tenant);
  addName(subject, "OU", spec.role);
  addName(subject, "CN", spec.name);
  for (const auto& [field, value] : spec.extra_subject) addName(subject, field.c_str(), value);
  std::vector<std::pair<int, std::string>> ext = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature"},
      {NID_ext_key_usage, spec.server ? "serverAuth" : "clientAuth"},
      {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid"}};
  if (!spec.alt_names.empty()) {
    std::string san;
    for (const auto& n : spec.alt_names) san += (san.empty() ? "" : ",") + n;
    ext.emplace_back(NID_subject_alt_name, san);
  }
  Cert cert = newCert(key.get(), subject, state_->cert.get(), state_->key.get(), spec.not_before,
                      spec.not_after, ext);
  X509_NAME_free(subject);
  return TestCredential{certPem(cert.get()), keyPem(key.get()), certDer(cert.get())};
}

namespace {
CertificateSpec makeSpec(const std::string& tenant, const char* role, const std::string& name) {
  CertificateSpec s;
  s.tenant = tenant;
  s.role = role;
  s.name = name;
  return s;
}
}  // namespace

CertificateSpec agentSpec(const std::string& tenant, const std::string& node) {
  return makeSpec(tenant, "agent", node);
}
CertificateSpec supportSpec(const std::string& name) {
  return makeSpec("ibcollect", "support", name);
}
CertificateSpec providerSpec(const std::string& name) {
  return makeSpec("ibcollect", "provider", name);
}

}  // namespace ibc::test
