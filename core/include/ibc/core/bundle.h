#pragma once

// The escalation bundle (docs/formats.md), as member bytes: building every member of a bundle,
// signing and checking its manifest, attaching a host result later. Pure: members are
// name → bytes; the archive around them (tar + zstd, libarchive) is the agent's
// (bundle/include/ibc/bundle/bundle_archive.h, library ibc_bundle).
//
// Members:
//   manifest.json        BundleManifest (proto JSON): format, case, tenant, job, nodes, time
//                        window, SHA-256 and size of every member the exporter put in,
//                        exporter, version, `redacted`, host results the exporter included
//   manifest.sig         BundleSignature (binary proto): Ed25519 over manifest.json's bytes
//                        and the exporter's certificate chain (a `support` certificate)
//   snapshots/<n>.ibsnap the original signed snapshot files (left out when redacted)
//   findings.json        the `{"nodes","findings"}` document of `analyze --format json`
//   report.md            for people: verdict per node, findings, evidence, next steps
//   pf-inspection.md     per suspect VF: how the host finds the PF, commands to run there
//   pf-inspection.json   the same as PfInspection (proto JSON)
//   host/<host>.json     host-side results: included by the exporter (listed in the
//                        manifest) or attached later (host-inspect --attach-to)
//   attachments/NNN.json one record per result attached after export (BundleAttachment,
//                        proto JSON; NNN = 001, 002, ...): the previous state's SHA-256
//                        (manifest.json's for the first, the previous record's after), the
//                        new member's name, SHA-256 and size, host, signer, time
//   attachments/NNN.sig  BundleSignature over that record's bytes (a `provider` or
//                        `support` certificate)
//
// Who signs what: only a support certificate exports; attaching adds a record signed by a
// provider or support certificate over the bundle's state before it and its one new member,
// so the exporter's manifest.sig and every earlier record stay byte for byte and checkable.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
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
inline constexpr std::string_view kAttachmentsDir = "attachments/";

// What a reader accepts. The archive reader enforces them while it decompresses (a member
// or the whole archive past a bound is refused before more is inflated).
struct BundleLimits {
  std::size_t max_members = 10'000;            // a 2,000-node job is ~2,010 members
  std::uint64_t max_member_bytes = 64u << 20;  // = kMaxSnapshotFileBytes
  std::uint64_t max_total_bytes = 4ull << 30;  // sum of member sizes, decompressed
  // A verifying reader (ibc::bundle::readVerifiedBundle) inflates at most this many bytes
  // that no verified signature vouches for (BundleVerifier::vouches) before it stops: a
  // bomb or a forged bundle costs this much, not max_total_bytes.
  std::uint64_t max_unvouched_bytes = 64u << 20;
};

// Member name → bytes, ordered by name (so archives are written in one stable order).
using BundleMembers = std::map<std::string, std::string, std::less<>>;

// A safe member name: relative, '/'-separated components of [A-Za-z0-9._-] that are not
// "." or "..", no empty component, at most 255 bytes and 2 levels deep. Errors:
// InvalidArgument naming what is wrong (absolute path, "..", a character, ...).
Status checkMemberName(std::string_view name);

// The kind a member name has in the layout ("manifest", "signature", "snapshot",
// "findings", "report", "pf_inspection_md", "pf_inspection_json", "host", "attachment",
// "attachment_signature"), or "" when the name is not part of the layout.
std::string_view bundleMemberKind(std::string_view name);

// "attachments/001.json" and "attachments/001.sig" for attachment `sequence` (from 1; at
// least three digits).
std::string attachmentRecordName(uint32_t sequence);
std::string attachmentSignatureName(uint32_t sequence);

// Who may sign what (docs/formats.md). Only a `support` certificate exports a bundle (signs
// manifest.json); a `provider` or `support` certificate attaches host results. Tenants'
// agent keys live in their VMs: they sign snapshots, never a bundle. Errors:
// PermissionDenied naming the certificate, its role and who may sign instead.
Status checkExporterRole(const CertificateIdentity& signer);
Status checkAttacherRole(const CertificateIdentity& signer);

// A free member name for a host result of `host`: "host/<host>.json" with the host's
// characters outside [A-Za-z0-9._-] replaced, "host/<host>-2.json" when that is taken.
std::string hostMemberName(const BundleMembers& members, std::string_view host);

// One snapshot to put into a bundle: the `.ibsnap` file's bytes, as read.
struct BundleSnapshotInput {
  std::string file_bytes;
  std::string origin;  // where it came from, for error messages only (never stored)
};

// A host-side result (the host-inspect JSON document) and where it was inspected.
struct BundleHostResult {
  std::string host;
  std::string bytes;
  int64_t attached_at_unix_ms = 0;
};

struct BundleExportOptions {
  std::string case_id;
  std::string job_id;  // empty: the snapshots' job id when they agree
  bool redact = false;
  std::string ibcollect_version;
  int64_t created_unix_ms = 0;
  RuleOptions rules;
  // Host results the exporter vouches for (a case's): host/<host>.json members listed in
  // the manifest and signed with it, each recorded in manifest.attachments. Left out of a
  // redacted bundle (they name hosts).
  std::vector<BundleHostResult> host_results;
  // With `redact`: filled with "pseudonym<TAB>original" lines, sorted, for the exporter to
  // keep beside the bundle (never inside it: docs/formats.md). Untouched without `redact`.
  std::string* pseudonym_map = nullptr;
};

// Builds every member and signs the manifest with `exporter`. Findings are the job's
// verdict over all the snapshots (judgeJob: per-node and cross-node findings and
// escalations, the same `--job`, `compare` and the console show), rendered by buildReport
// and renderJson.
// Snapshots of one node get distinct member names (`node01.ibsnap`, `node01-2.ibsnap`).
// Errors: PermissionDenied (`exporter` is no support certificate: checkExporterRole),
// InvalidArgument (no snapshot), Malformed (an input is not an .ibsnap file or its
// snapshot does not parse; the message names its origin), TooLarge (a host result past
// BundleLimits::max_member_bytes), Io (signing failed).
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

// manifest.sig bytes: `signer`'s signature over exactly `manifest_json` (any bytes: an
// attachment record's .sig is the same record). Errors: Io.
Result<std::string> signManifest(std::string_view manifest_json, const SnapshotSigner& signer);
Result<::ibcollect::v1::BundleSignature> parseManifestSignature(std::string_view bytes);

// Parses an attachment record (attachments/NNN.json, BundleAttachment in proto JSON).
// Unknown fields are refused. Errors: Malformed, TooLarge (past 1 MiB).
Result<::ibcollect::v1::BundleAttachment> parseAttachmentRecord(std::string_view json);

// ---- verification ------------------------------------------------------------------------

enum class BundleProblem {
  MalformedManifest,    // manifest.json missing or does not parse
  ManifestSignature,    // manifest.sig missing, malformed, or does not verify
  HashMismatch,         // a member's SHA-256 or size differs from the manifest's (or record's)
  SnapshotSignature,    // a snapshot's own signature (or signer's node) does not verify
  UnknownMember,        // a member neither the manifest nor a verified attachment covers
  MissingMember,        // a member the manifest (or an attachment) lists is absent
  MalformedMember,      // a member that must parse does not (a snapshot file)
  SignerRole,           // a signature by a certificate whose role may not sign it
  ManifestClaim,        // what manifest.json (or a record) claims differs from the members
  AttachmentSignature,  // an attachment's signature is missing, malformed or does not verify
  AttachmentChain,      // an attachment record out of order, bound to another state, or
                        // attaching a member that is no host result or already covered
  Unread,               // the reader stopped here: too much that no signature vouches for
};

// Stable short name: "malformed_manifest", "manifest_signature", "hash", "snapshot_signature",
// "unknown_member", "missing_member", "malformed_member", "signer_role", "manifest_claim",
// "attachment_signature", "attachment_chain", "unread".
std::string_view bundleProblemName(BundleProblem problem);

struct BundleMemberProblem {
  std::string member;
  BundleProblem problem;
  std::string message;  // for people: what differs, who signed, what to do
};

// One signature of the bundle: the exporter's over manifest.json, or an attachment's.
struct BundleSignerCheck {
  std::string signature_member;  // "manifest.sig", "attachments/001.sig"
  std::string covers;            // "manifest.json", or the attached member "host/hv12.json"
  bool exporter = false;         // manifest.sig; else an attachment
  SignatureCheck signature;      // who signed (role in signature.signer) and whether it held
  bool role_ok = false;          // the signer's role may sign this (checkExporterRole/...)
};

struct BundleCheck {
  std::vector<BundleMemberProblem> problems;                // every failing member, in member order
  std::optional<::ibcollect::v1::BundleManifest> manifest;  // when it parsed
  SignatureCheck manifest_signature;                        // who signed manifest.json
  // Each snapshot member and its signature check, in member order.
  std::vector<std::pair<std::string, SignatureCheck>> snapshots;
  // Every signer: the exporter first (when manifest.sig is there), then each attachment in
  // sequence order.
  std::vector<BundleSignerCheck> signers;
  // The attachment records that verified, in sequence order.
  std::vector<::ibcollect::v1::BundleAttachment> attachments;
  // What the manifest claims that could not be checked, for people (a redacted bundle
  // carries no snapshots: its tenant, nodes, snapshot ids and their signers are the
  // exporter's word).
  std::vector<std::string> unchecked;
  bool ok() const { return problems.empty(); }
};

// Checks everything offline against the CA, as of time `at` (certificate validity):
// - manifest.sig over manifest.json, signed by a support certificate, and the exporter
//   manifest.json names is that certificate's identity;
// - each attachment in sequence order: its record parses, follows the state before it
//   (manifest.json, then the previous record), is signed by a provider or support
//   certificate that is the record's attached_by, and attaches one host/ member no one
//   covered before, whose SHA-256 and size it names;
// - every member's SHA-256 and size against the manifest or its record; every member is
//   covered by the manifest or exactly one verified attachment (none unknown, none missing);
// - every snapshot's signature and that its signer is the node it describes;
// - what the manifest claims matches the members: each node's member, snapshot id (SHA-256
//   of the signed envelope), node name and recorded signer; every snapshot is one of the
//   nodes; the snapshots' signers are of one tenant, the manifest's. A redacted bundle has
//   no snapshot to compare with: that is said in `unchecked`.
// Every failing member is named; nothing stops at the first failure.
BundleCheck verifyBundle(const BundleMembers& members, const SignatureVerifier& verifier,
                         std::chrono::system_clock::time_point at);

// verifyBundle as the members arrive, one at a time in archive order (the archive reader feeds
// it while it inflates, so no member need be held after it is added): each member is hashed
// when it is added, a snapshot's signature and facts are checked then, and manifest.json and
// manifest.sig are checked as soon as both are in, so that what follows them can be told
// vouched for or not before it is inflated. finish() gives what verifyBundle gives for the
// same members.
class BundleVerifier {
 public:
  BundleVerifier(const SignatureVerifier& verifier, std::chrono::system_clock::time_point at);
  ~BundleVerifier();
  BundleVerifier(const BundleVerifier&) = delete;
  BundleVerifier& operator=(const BundleVerifier&) = delete;

  // One member (its name as checkMemberName accepts it). A name added twice is a problem.
  void add(std::string_view name, std::string_view bytes);
  // True when manifest.json verified (signed by a support certificate that it names) and
  // lists `name` with exactly `size` bytes: the exporter's signed word bounds it.
  bool vouches(std::string_view name, std::uint64_t size) const;
  // True once manifest.json and manifest.sig are in, the signature verified by a support
  // certificate and the manifest parsed: from then on vouches() may answer yes.
  bool manifestVerified() const;
  // The check. `stopped_at` (a member name) says the reader stopped before the end (past
  // BundleLimits::max_unvouched_bytes): the problems found so far plus one naming where and
  // why, without the checks that need every member (missing, unknown, claims).
  BundleCheck finish(std::string_view stopped_at = {}, std::string_view why_stopped = {});

  struct State;  // bundle_verify.cpp

 private:
  std::unique_ptr<State> s_;
};

// Attaches a host result after export (host-inspect --attach-to) without re-signing
// anything it did not check. In order: `signer` must be a provider or support certificate
// (checkAttacherRole), `result.bytes` within BundleLimits::max_member_bytes, and the bundle
// must pass verifyBundle (as of `at`); then `result.bytes` becomes a new member
// (hostMemberName: host/<host>.json, or -2, -3 ... when taken) and attachments/NNN.json +
// .sig (the next sequence) record and sign it. Nothing that was there changes. `verified`
// (optional) receives the check made before attaching, with its problems when it failed.
// Returns the member added. Errors: PermissionDenied (role), TooLarge, InvalidArgument (the
// bundle does not verify: nothing is attached; the message names the first failures), Io
// (signing).
Result<std::string> attachHostResult(BundleMembers& members, const BundleHostResult& result,
                                     const SnapshotSigner& signer,
                                     const SignatureVerifier& verifier,
                                     std::chrono::system_clock::time_point at,
                                     BundleCheck* verified = nullptr);

}  // namespace ibc::core
