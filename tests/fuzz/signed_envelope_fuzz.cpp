// Signed snapshot envelopes as the collector receives them: the .ibsnap decoder, signature
// and chain verification against a fixed CA at a fixed time, and the index-key reader.
// Invariant: verifying twice (the second time from the chain cache) gives the same answer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibc/collector/service/snapshot_keys.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"

namespace {

// The CA of the seed in seeds/signed_envelope (certs/make-pki, 10 years from 2026-11-22).
constexpr std::string_view kCaPem = R"(-----BEGIN CERTIFICATE-----
MIIBmDCCAUqgAwIBAgIUHP6ARL53ZZaqBpcEvyFyhNJHx/YwBQYDK2VwMDgxEjAQ
BgNVBAoMCWliY29sbGVjdDELMAkGA1UECwwCY2ExFTATBgNVBAMMDGliY29sbGVj
dCBDQTAeFw0yNjExMjIwNTQxMTVaFw0zNjExMTkwNTQxMTVaMDgxEjAQBgNVBAoM
CWliY29sbGVjdDELMAkGA1UECwwCY2ExFTATBgNVBAMMDGliY29sbGVjdCBDQTAq
MAUGAytlcAMhAA8WqJzOKcF1D5/ZfphaecS6o+hx3iodINKBk8v65fkEo2YwZDAf
BgNVHSMEGDAWgBRwAAGR2AcuPW4/FyFUSiMouea7gjASBgNVHRMBAf8ECDAGAQH/
AgEAMA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQUcAABkdgHLj1uPxchVEojKLnm
u4IwBQYDK2VwA0EAfGaWLSzPJ5EEic3F48gBHNgWFqkQ4/rGx+rJCBUnFzqRvGDv
S4CK4qrc/VfBl/TzYnYtkGy/j7Nb1F0Bnha3AA==
-----END CERTIFICATE-----
)";

const ibc::core::SignatureVerifier& verifier() {
  static const auto* v = ibc::core::SignatureVerifier::fromPem(kCaPem).value().release();
  return *v;
}

void check(const ibcollect::v1::SignedSnapshot& envelope) {
  // 2027-01-01: inside the seed certificates' validity, whatever today's date.
  const auto at = std::chrono::system_clock::from_time_t(1798761600);
  const auto first = verifier().verify(envelope, at);
  const auto second = verifier().verify(envelope, at);
  if (first.problem != second.problem) std::abort();
  if (first.ok()) (void)ibc::core::snapshotId(envelope);
  (void)ibc::collector::readSnapshotIndexKeys(envelope.snapshot());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto file = ibc::core::decodeSnapshotFile(in); file.ok()) check(*file);
  ibcollect::v1::SignedSnapshot raw;
  if (raw.ParseFromArray(data, static_cast<int>(size))) check(raw);
  (void)ibc::collector::readSnapshotIndexKeys(in);
  return 0;
}
