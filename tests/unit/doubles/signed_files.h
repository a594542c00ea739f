#pragma once

// Signed snapshots and the PEM files of a test PKI (test_pki.h), for commands that read them
// from disk: `verify`, `upload`, `bundle export|verify`, `host-inspect --attach-to`. Files
// are written through the write seam (os::DiskFileWriter) into a test's temp dir.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"
#include "ibcollect/v1/snapshot.pb.h"
#include "test_pki.h"

namespace ibc::test {

// `snapshot` signed by `signer` (its CN must name the snapshot's node for a collector or
// `verify` to accept it: signing itself does not check).
inline ::ibcollect::v1::SignedSnapshot signedBy(const TestCredential& signer,
                                                const ::ibcollect::v1::Snapshot& snapshot) {
  auto key = core::SnapshotSigner::fromPem(signer.certificate_pem, signer.key_pem);
  EXPECT_TRUE(key.ok()) << (key.ok() ? "" : key.error().message);
  auto signed_snapshot = key->sign(snapshot);
  EXPECT_TRUE(signed_snapshot.ok());
  return *signed_snapshot;
}

// A snapshot of `node` in `job`, signed by `signer` (its CN must name the node), with
// `padding` bytes of kernel text to make it as large as a test needs.
inline ::ibcollect::v1::SignedSnapshot signedSnapshot(const TestCredential& signer,
                                                      const std::string& node,
                                                      const std::string& job, int64_t at_ms,
                                                      std::size_t padding = 0) {
  ::ibcollect::v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname(node);
  s.mutable_node()->set_job_id(job);
  s.mutable_node()->set_collected_at_unix_ms(at_ms);
  s.mutable_node()->set_kernel(std::string(padding, 'k'));
  return signedBy(signer, s);
}

// Writes `bytes` to `path` (a test failure when it cannot) and returns the path.
inline std::string writeTestFile(const std::string& path, const std::string& bytes) {
  os::DiskFileWriter disk;
  const auto st = disk.writeFileAtomic(path, bytes);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return path;
}

// The .ibsnap file of `envelope` at `path`.
inline std::string writeSnapshotFile(const std::string& path,
                                     const ::ibcollect::v1::SignedSnapshot& envelope) {
  return writeTestFile(path, core::encodeSnapshotFile(envelope));
}

// A credential as the files `--cert DIR/NAME.pem --key DIR/NAME.key` name.
struct CredentialFiles {
  std::string cert;
  std::string key;
};
inline CredentialFiles writeCredential(const std::string& dir, const std::string& name,
                                       const TestCredential& who) {
  return {writeTestFile(dir + "/" + name + ".pem", who.certificate_pem),
          writeTestFile(dir + "/" + name + ".key", who.key_pem)};
}

}  // namespace ibc::test
