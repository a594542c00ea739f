#pragma once

// The escalation bundle (DESIGN §8), as member bytes: building every member of a bundle,
// signing and checking its manifest, adding a member later (host results). Pure: members
// are name → bytes; the archive around them (tar + zstd, libarchive) is the agent's
// (bundle/include/ibc/bundle/bundle_archive.h, library ibc_bundle).
//
// Members:
//   manifest.json        BundleManifest (proto JSON): format, case, tenant, job, nodes, time
//                        window, SHA-256 and size of every other member, exporter, version,
//                        `redacted`, attachments
//   manifest.sig         BundleSignature (binary proto): Ed25519 over manifest.json's bytes
//                        and the signer's certificate chain
//   snapshots/<n>.ibsnap the original signed snapshot files (left out when redacted)
//   findings.json        the `{"nodes","findings"}` document of `analyze --format json`
//   report.md            for people: verdict per node, findings, evidence, next steps
//   pf-inspection.md     per suspect VF: how the host finds the PF, commands to run there
//   pf-inspection.json   the same as PfInspection (proto JSON)
//   host/<host>.json     host-side results attached later (host-inspect --attach-to)

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ibc/core/result.h"
#include "ibc/core/rules.h"
#include "ibc/core/signing.h"
#include "ibcollect/v1/bundle.pb.h"

namespace ibc::core {

inline constexpr std::string_view kBundleFormat = "ibcollect-bundle";
inline constexpr uint32_t kBundleFormatVersion = 1;

inline constexpr std::string_view kManifestMember = "manifest.json";
inline constexpr std::string_view kManifestSignatureMember = "manifest.sig";
inline constexpr std::string_view kFindingsMember = "findings.json";
inline constexpr std::string_view kReportMember = "report.md";
inline constexpr std::string_view kPfInspectionMdMember = "pf-inspection.md";
inline constexpr std::string_view kPfInspectionJsonMember = "pf-inspection.json";
inline constexpr std::string_view kSnapshotsDir = "snapshots/";
inline constexpr std::string_view kHostDir = "host/";

// What a reader accepts. The archive reader enforces them while it decompresses (a member
// or the whole archive past a bound is refused before more is inflated).
struct BundleLimits {
  std::size_t max_members = 10'000;            // a 2,000-node job is ~2,010 members
  std::uint64_t max_member_bytes = 64u << 20;  // = kMaxSnapshotFileBytes
  std::uint64_t max_total_bytes = 4ull << 30;  // sum of member sizes, decompressed
};

// Member name → bytes, ordered by name (so archives are written in one stable order).
using BundleMembers = std::map<std::string, std::string, std::less<>>;

// A safe member name: relative, '/'-separated components of [A-Za-z0-9._-] that are not
// "." or "..", no empty component, at most 255 bytes and 2 levels deep. Errors:
// InvalidArgument naming what is wrong (absolute path, "..", a character, ...).
Status checkMemberName(std::string_view name);

// The kind a member name has in the layout ("manifest", "signature", "snapshot",
// "findings", "report", "pf_inspection_md", "pf_inspection_json", "host"), or "" when
// the name is not part of the layout.
std::string_view bundleMemberKind(std::string_view name);

// One snapshot to put into a bundle: the `.ibsnap` file's bytes, as read.
struct BundleSnapshotInput {
  std::string file_bytes;
  std::string origin;  // where it came from, for error messages only (never stored)
};

struct BundleExportOptions {
  std::string case_id;
  std::string job_id;  // empty: the snapshots' job id when they agree
  bool redact = false;
  std::string ibcollect_version;
  int64_t created_unix_ms = 0;
  RuleOptions rules;
};

// Builds every member and signs the manifest with `exporter`. Findings are the job's
// verdict over all the snapshots (judgeJob: per-node and cross-node findings and
// escalations, the same `--job`, `compare` and the console show), rendered by buildReport
// and renderJson.
// Snapshots of one node get distinct member names (`node01.ibsnap`, `node01-2.ibsnap`).
// Errors: InvalidArgument (no snapshot), Malformed (an input is not an .ibsnap file or
// its snapshot does not parse; the message names its origin), Io (signing failed).
Result<BundleMembers> buildBundle(const std::vector<BundleSnapshotInput>& snapshots,
                                  const BundleExportOptions& options,
                                  const SnapshotSigner& exporter);

// manifest.json bytes of a manifest (proto JSON, two-space indent, trailing newline).
std::string renderManifest(const ::ibcollect::v1::BundleManifest& manifest);
// Parses manifest.json. Unknown fields are refused; so is any format but kBundleFormat or a
// format_version newer than this build. Errors: Malformed, Unsupported.
Result<::ibcollect::v1::BundleManifest> parseManifest(std::string_view json);

// The manifest entry of one member (name, SHA-256, size, kind).
::ibcollect::v1::BundleMember describeMember(std::string_view name, std::string_view bytes);

// manifest.sig bytes: `signer`'s signature over exactly `manifest_json`. Errors: Io.
Result<std::string> signManifest(std::string_view manifest_json, const SnapshotSigner& signer);
Result<::ibcollect::v1::BundleSignature> parseManifestSignature(std::string_view bytes);

// Adds (or replaces, when `name` was attached before) a host result under host/: the
// member, its manifest entry and an attachment record, then re-renders manifest.json and
// re-signs it with `signer` (the host engineer's certificate). The snapshots keep their
// own signatures; the manifest's previous signature is replaced. Errors: InvalidArgument
// (name not "host/<name>.json" or unsafe), Malformed (the bundle's manifest does not
// parse), TooLarge (bytes past BundleLimits::max_member_bytes), Io (signing).
Status addHostMember(BundleMembers& members, std::string_view name, std::string bytes,
                     std::string_view host, const SnapshotSigner& signer, int64_t now_unix_ms);

// ---- verification ------------------------------------------------------------------------

enum class BundleProblem {
  MalformedManifest,  // manifest.json missing or does not parse
  ManifestSignature,  // manifest.sig missing, malformed, or does not verify
  HashMismatch,       // a member's SHA-256 or size differs from the manifest's
  SnapshotSignature,  // a snapshot's own signature (or signer's node) does not verify
  UnknownMember,      // a member the manifest does not list
  MissingMember,      // a member the manifest lists is absent
  MalformedMember,    // a member that must parse does not (a snapshot file)
};

// Stable short name: "malformed_manifest", "manifest_signature", "hash", "snapshot_signature",
// "unknown_member", "missing_member", "malformed_member".
std::string_view bundleProblemName(BundleProblem problem);

struct BundleMemberProblem {
  std::string member;
  BundleProblem problem;
  std::string message;  // for people: what differs, who signed, what to do
};

struct BundleCheck {
  std::vector<BundleMemberProblem> problems;                // every failing member, in member order
  std::optional<::ibcollect::v1::BundleManifest> manifest;  // when it parsed
  SignatureCheck manifest_signature;                        // who signed manifest.json
  // Each snapshot member and its signature check, in member order.
  std::vector<std::pair<std::string, SignatureCheck>> snapshots;
  bool ok() const { return problems.empty(); }
};

// Checks everything offline against the CA: manifest.sig over manifest.json (chain, time
// `at`), every member's SHA-256 and size against the manifest, the manifest lists exactly
// the members present (none unknown, none missing), every snapshot's signature and that its
// signer is the node it describes. Every failing member is named; nothing stops at the
// first failure.
BundleCheck verifyBundle(const BundleMembers& members, const SignatureVerifier& verifier,
                         std::chrono::system_clock::time_point at);

}  // namespace ibc::core
