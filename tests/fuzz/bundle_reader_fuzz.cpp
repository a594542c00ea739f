// Escalation bundles as `bundle verify` and `bundle show` read them: the bounded archive
// reader (tar + zstd through libarchive), the manifest parser, and verification against a
// fixed CA at a fixed time. Invariants: what the reader accepts has only safe member names
// within the bounds, and writing it back and reading again gives the same members.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/signing.h"

namespace {

// The CA of the seed bundle in seeds/bundle_reader (certs/make-pki, 10 years from 2026-11-25).
constexpr std::string_view kCaPem = R"(-----BEGIN CERTIFICATE-----
MIIBmDCCAUqgAwIBAgIUXFLQQbRWdye8nOjJZxYhY6l7cVIwBQYDK2VwMDgxEjAQ
BgNVBAoMCWliY29sbGVjdDELMAkGA1UECwwCY2ExFTATBgNVBAMMDGliY29sbGVj
dCBDQTAeFw0yNjExMjUxMDE1MjlaFw0zNjExMjIxMDE1MjlaMDgxEjAQBgNVBAoM
CWliY29sbGVjdDELMAkGA1UECwwCY2ExFTATBgNVBAMMDGliY29sbGVjdCBDQTAq
MAUGAytlcAMhABTa0UuqmnK4y0WMx7MkEM3TtkPz0+4o5BwP8LA3ZsQio2YwZDAf
BgNVHSMEGDAWgBSi2t3drB1lqAC3deAfFj/kMn58cTASBgNVHRMBAf8ECDAGAQH/
AgEAMA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQUotrd3awdZagAt3XgHxY/5DJ+
fHEwBQYDK2VwA0EAt8wl5+7/SX6UXjCh8TvzGIwJBY+a/MIMZDwAPrQBptsONcqT
7Rfy8Glot1JrT9paQWzqSK3wdHgDWwVUNYx+Dg==
-----END CERTIFICATE-----
)";

const ibc::core::SignatureVerifier& verifier() {
  static const auto* v = ibc::core::SignatureVerifier::fromPem(kCaPem).value().release();
  return *v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)ibc::core::parseManifest(in);
  ibc::core::BundleLimits limits;
  limits.max_members = 64;
  limits.max_member_bytes = 1u << 20;
  limits.max_total_bytes = 4u << 20;
  auto members = ibc::bundle::readBundleArchive(in, limits);
  if (!members.ok()) return 0;
  std::uint64_t total = 0;
  for (const auto& [name, bytes] : *members) {
    if (!ibc::core::checkMemberName(name).ok()) std::abort();
    if (bytes.size() > limits.max_member_bytes) std::abort();
    total += bytes.size();
  }
  if (members->size() > limits.max_members || total > limits.max_total_bytes) std::abort();
  // 2027-01-01: inside the seed certificates' validity, whatever today's date.
  const auto at = std::chrono::system_clock::from_time_t(1798761600);
  const auto check = ibc::core::verifyBundle(*members, verifier(), at);
  if (check.ok() && !check.manifest) std::abort();
  // The verifying reader over the same bytes: within its bound, and the same verdict when it
  // read everything.
  limits.max_unvouched_bytes = 2u << 20;
  auto verified = ibc::bundle::readVerifiedBundle(in, verifier(), at, limits);
  if (!verified.ok()) std::abort();  // the archive itself read above
  if (verified->check.ok() != check.ok()) {
    bool stopped = false;
    for (const auto& p : verified->check.problems) {
      stopped = stopped || p.problem == ibc::core::BundleProblem::Unread;
    }
    if (!stopped) std::abort();
  }
  auto again = ibc::bundle::writeBundleArchive(*members);
  if (!again.ok()) std::abort();
  auto back = ibc::bundle::readBundleArchive(*again, limits);
  if (!back.ok() || *back != *members) std::abort();
  return 0;
}
