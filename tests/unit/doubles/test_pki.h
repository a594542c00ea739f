#pragma once

// Test-only certificate authority built with the OpenSSL API: issues certificates that
// certs/make-pki cannot (expired, not yet valid, non-Ed25519 keys, odd subjects) so
// unit tests run without spawning openssl. Integration tests load the CA that make-pki
// wrote (fromPem) to issue such certificates under it.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibc::test {

struct TestCredential {
  std::string certificate_pem;
  std::string key_pem;
  std::string certificate_der;
};

enum class TestKeyType { Ed25519, EcP256 };

struct CertificateSpec {
  std::string tenant;  // subject O
  std::string role;    // subject OU
  std::string name;    // subject CN
  std::chrono::system_clock::time_point not_before =
      std::chrono::system_clock::now() - std::chrono::hours(1);
  std::chrono::system_clock::time_point not_after =
      std::chrono::system_clock::now() + std::chrono::hours(24);
  TestKeyType key = TestKeyType::Ed25519;
  bool server = false;                 // extendedKeyUsage serverAuth, else clientAuth
  std::vector<std::string> alt_names;  // subjectAltName entries, e.g. "IP:127.0.0.1"
  // More subject entries after O, OU, CN, e.g. {"OU", "support"} for an ambiguous role.
  std::vector<std::pair<std::string, std::string>> extra_subject;
};

class TestCa {
 public:
  // A new self-signed Ed25519 CA. Aborts the test binary on OpenSSL failure.
  static TestCa create(const std::string& name = "test CA");
  // An existing CA (e.g. the one certs/make-pki wrote).
  static TestCa fromPem(std::string_view certificate_pem, std::string_view key_pem);

  TestCredential issue(const CertificateSpec& spec) const;
  const std::string& certificatePem() const { return pem_; }

 private:
  struct State;
  std::shared_ptr<const State> state_;
  std::string pem_;
};

// Shorthand: an agent (OU=agent), support (OU=support) or provider host engineer
// (OU=provider) certificate valid now.
CertificateSpec agentSpec(const std::string& tenant, const std::string& node);
CertificateSpec supportSpec(const std::string& name);
CertificateSpec providerSpec(const std::string& name);

}  // namespace ibc::test
