#include "ibc/core/bundle.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "ibc/core/bundle_report.h"
#include "ibc/core/encoding.h"
#include "ibc/core/findings.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/json.h"
#include "ibc/core/redact.h"
#include "ibc/core/report.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

constexpr std::size_t kMaxManifestBytes = 16u << 20;

bool nameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

// "node01" for a member name: file-name characters only, never hidden or empty.
std::string safeStem(std::string s) {
  for (char& c : s) {
    if (!nameChar(c)) c = '_';
  }
  if (s.size() > 200) s.resize(200);
  if (s.empty() || s.front() == '.') s = "node" + s;
  return s;
}

v1::BundleIdentity identityMessage(const CertificateIdentity& id) {
  v1::BundleIdentity out;
  out.set_subject(id.subject);
  out.set_tenant(id.tenant);
  out.set_role(std::string(certificateRoleName(id.role)));
  out.set_name(id.name);
  return out;
}

// Lists every member but the manifest and its signature, sorted, in the manifest.
void listMembers(const BundleMembers& members, v1::BundleManifest& manifest) {
  manifest.clear_members();
  for (const auto& [name, bytes] : members) {
    if (name == kManifestMember || name == kManifestSignatureMember) continue;
    *manifest.add_members() = describeMember(name, bytes);
  }
}

Status writeSignedManifest(BundleMembers& members, const v1::BundleManifest& manifest,
                           const SnapshotSigner& signer) {
  std::string json = renderManifest(manifest);
  auto sig = signManifest(json, signer);
  if (!sig.ok()) return sig.error();
  members[std::string(kManifestMember)] = std::move(json);
  members[std::string(kManifestSignatureMember)] = std::move(*sig);
  return Status();
}

std::string problemText(const SignatureCheck& c) {
  return std::string(signatureProblemName(c.problem)) + ": " + c.message;
}

bool sameIdentity(const v1::BundleIdentity& claimed, const CertificateIdentity& actual) {
  return claimed.subject() == actual.subject && claimed.tenant() == actual.tenant &&
         claimed.role() == certificateRoleName(actual.role) && claimed.name() == actual.name;
}

std::string whoIs(const CertificateIdentity& id) {
  return (id.subject.empty() ? std::string("an unreadable certificate")
                             : printable(id.subject, 200)) +
         " (role " + std::string(certificateRoleName(id.role)) + ")";
}

// Checks `signature_bytes` (a BundleSignature) over exactly `signed_bytes`.
SignatureCheck verifySignatureRecord(std::string_view signed_bytes,
                                     std::string_view signature_bytes,
                                     std::string_view signature_member,
                                     const SignatureVerifier& verifier,
                                     std::chrono::system_clock::time_point at) {
  v1::BundleSignature sig;
  if (signature_bytes.size() > (1u << 20) ||
      !sig.ParseFromArray(signature_bytes.data(), static_cast<int>(signature_bytes.size())) ||
      !sig.GetReflection()->GetUnknownFields(sig).empty()) {
    SignatureCheck c;
    c.problem = SignatureProblem::MalformedChain;
    c.message = std::string(signature_member) + " is not a signature record";
    return c;
  }
  v1::SignedSnapshot env;
  env.set_snapshot(std::string(signed_bytes));
  env.set_signature_algorithm(sig.signature_algorithm());
  env.set_signature(sig.signature());
  for (const auto& der : sig.certificate_chain()) env.add_certificate_chain(der);
  return verifier.verify(env, at);
}

// "attachments/007.json" → 7 and whether it is the record (else the signature); 0 when the
// name is not one (non-canonical numbers such as "7" or "0007" are not).
std::pair<uint32_t, bool> attachmentNumber(std::string_view name) {
  if (!startsWith(name, kAttachmentsDir)) return {0, false};
  std::string_view rest = name.substr(kAttachmentsDir.size());
  bool record = false;
  if (endsWith(rest, ".json")) {
    record = true;
    rest.remove_suffix(5);
  } else if (endsWith(rest, ".sig")) {
    rest.remove_suffix(4);
  } else {
    return {0, false};
  }
  if (rest.empty() || rest.size() > 9 ||
      !std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return {0, false};
  }
  const auto n = static_cast<uint32_t>(std::stoul(std::string(rest)));
  if (n == 0 ||
      attachmentRecordName(n) != std::string(kAttachmentsDir) + std::string(rest) + ".json") {
    return {0, false};
  }
  return {n, record};
}

}  // namespace

Status checkMemberName(std::string_view name) {
  const auto bad = [&](std::string why) {
    return Error{ErrorCode::InvalidArgument,
                 "member name '" + printable(name, 120) + "' " + std::move(why)};
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > 255) return bad("is longer than 255 bytes");
  if (name.front() == '/') return bad("is an absolute path");
  int depth = 0;
  for (std::string_view part : split(name, '/')) {
    if (part.empty()) return bad("has an empty path component");
    if (part == "." || part == "..") return bad("has a '" + std::string(part) + "' component");
    for (char c : part) {
      if (!nameChar(c)) return bad("has a character outside [A-Za-z0-9._-]");
    }
    ++depth;
  }
  if (depth > 2) return bad("is deeper than two levels");
  return Status();
}

std::string_view bundleMemberKind(std::string_view name) {
  if (name == kManifestMember) return "manifest";
  if (name == kManifestSignatureMember) return "signature";
  if (name == kFindingsMember) return "findings";
  if (name == kReportMember) return "report";
  if (name == kPfInspectionMdMember) return "pf_inspection_md";
  if (name == kPfInspectionJsonMember) return "pf_inspection_json";
  const auto under = [&](std::string_view dir, std::string_view ext) {
    if (!startsWith(name, dir) || !endsWith(name, ext)) return false;
    const std::string_view stem = name.substr(dir.size(), name.size() - dir.size() - ext.size());
    return !stem.empty() && stem.find('/') == std::string_view::npos;
  };
  if (under(kSnapshotsDir, ".ibsnap")) return "snapshot";
  if (under(kHostDir, ".json")) return "host";
  if (const auto [n, record] = attachmentNumber(name); n != 0) {
    return record ? "attachment" : "attachment_signature";
  }
  return {};
}

std::string attachmentRecordName(uint32_t sequence) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03u", sequence);
  return std::string(kAttachmentsDir) + buf + ".json";
}

std::string attachmentSignatureName(uint32_t sequence) {
  std::string name = attachmentRecordName(sequence);
  return name.substr(0, name.size() - 5) + ".sig";
}

Status checkExporterRole(const CertificateIdentity& signer) {
  if (signer.role == CertificateRole::Support) return Status();
  return Error{ErrorCode::PermissionDenied,
               whoIs(signer) + " may not sign a bundle: only a support certificate exports one"};
}

Status checkAttacherRole(const CertificateIdentity& signer) {
  if (signer.role == CertificateRole::Provider || signer.role == CertificateRole::Support) {
    return Status();
  }
  return Error{
      ErrorCode::PermissionDenied,
      whoIs(signer) + " may not attach to a bundle: only a provider or support certificate does"};
}

std::string hostMemberName(const BundleMembers& members, std::string_view host) {
  const std::string stem = safeStem(std::string(host));
  std::string name = std::string(kHostDir) + stem + ".json";
  for (int n = 2; members.count(name) != 0; ++n) {
    name = std::string(kHostDir) + stem + "-" + std::to_string(n) + ".json";
  }
  return name;
}

v1::BundleMember describeMember(std::string_view name, std::string_view bytes) {
  v1::BundleMember m;
  m.set_name(std::string(name));
  m.set_sha256(sha256Hex(bytes));
  m.set_size(bytes.size());
  m.set_kind(std::string(bundleMemberKind(name)));
  return m;
}

std::string renderManifest(const v1::BundleManifest& manifest) {
  return messageToJson(manifest, 2) + "\n";
}

Result<v1::BundleManifest> parseManifest(std::string_view json) {
  if (json.size() > kMaxManifestBytes) {
    return Error{ErrorCode::TooLarge, "manifest.json is larger than 16 MiB"};
  }
  v1::BundleManifest m;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &m, options);
  if (!status.ok()) {
    return Error{ErrorCode::Malformed,
                 "manifest.json does not parse: " + printable(status.ToString(), 300)};
  }
  if (m.format() != kBundleFormat) {
    return Error{ErrorCode::Malformed, "manifest.json format is '" + printable(m.format(), 64) +
                                           "', not '" + std::string(kBundleFormat) + "'"};
  }
  if (m.format_version() == 0 || m.format_version() > kBundleFormatVersion) {
    return Error{ErrorCode::Unsupported,
                 "manifest.json format_version " + std::to_string(m.format_version()) +
                     " is not supported (this ibcollect reads up to " +
                     std::to_string(kBundleFormatVersion) + "): use a newer ibcollect"};
  }
  return m;
}

Result<std::string> signManifest(std::string_view manifest_json, const SnapshotSigner& signer) {
  auto env = signer.sign(std::string(manifest_json));
  if (!env.ok()) return env.error();
  v1::BundleSignature sig;
  sig.set_signature_algorithm(env->signature_algorithm());
  sig.set_signature(env->signature());
  for (const auto& der : env->certificate_chain()) sig.add_certificate_chain(der);
  std::string out;
  sig.SerializeToString(&out);
  return out;
}

Result<v1::BundleSignature> parseManifestSignature(std::string_view bytes) {
  v1::BundleSignature sig;
  if (bytes.size() > (1u << 20) ||
      !sig.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return Error{ErrorCode::Malformed, "manifest.sig is not a signature record"};
  if (!sig.GetReflection()->GetUnknownFields(sig).empty()) {
    return Error{ErrorCode::Malformed, "manifest.sig has fields this ibcollect does not know"};
  }
  return sig;
}

Result<v1::BundleAttachment> parseAttachmentRecord(std::string_view json) {
  if (json.size() > (1u << 20)) return Error{ErrorCode::TooLarge, "larger than 1 MiB"};
  v1::BundleAttachment a;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &a, options);
  if (!status.ok()) {
    return Error{ErrorCode::Malformed,
                 "the attachment record does not parse: " + printable(status.ToString(), 300)};
  }
  return a;
}

namespace {

// The inputs of a bundle, decoded: each snapshot's bytes, envelope and member name, the
// nodes to judge, and what the manifest says of them all.
struct BundleInputs {
  struct Input {
    std::string file_bytes;
    v1::SignedSnapshot envelope;
    std::string member;
  };
  std::vector<Input> inputs;
  std::vector<AnalyzedNode> nodes;
  std::set<std::string> job_ids;
  std::set<std::string> tenants;
  int64_t first = 0;  // oldest and newest collection time
  int64_t last = 0;
};

// Decodes every input (its origin names it in errors) and gives each a unique member name:
// a second snapshot of one node (before/after) gets "-2". Snapshots of several tenants are
// refused: a bundle covers one tenant's job.
Result<BundleInputs> readBundleInputs(const std::vector<BundleSnapshotInput>& snapshots) {
  BundleInputs out;
  std::set<std::string> used;
  std::map<std::string, int> next_suffix;  // per stem: the next "-N" to try (from 2)
  for (const auto& in : snapshots) {
    auto env = decodeSnapshotFile(in.file_bytes);
    if (!env.ok()) return Error{ErrorCode::Malformed, in.origin + ": " + env.error().message};
    auto snap = openSnapshot(*env);
    if (!snap.ok()) return Error{ErrorCode::Malformed, in.origin + ": " + snap.error().message};
    const std::string stem = safeStem(snapshotNodeName(snap->node()));
    std::string member = std::string(kSnapshotsDir) + stem + ".ibsnap";
    int& n = next_suffix.try_emplace(stem, 2).first->second;
    for (; used.count(member) != 0; ++n) {
      member = std::string(kSnapshotsDir) + stem + "-" + std::to_string(n) + ".ibsnap";
    }
    used.insert(member);
    if (!snap->node().job_id().empty()) out.job_ids.insert(snap->node().job_id());
    const int64_t at = snap->node().collected_at_unix_ms();
    if (at > 0) {
      out.first = out.first == 0 ? at : std::min(out.first, at);
      out.last = std::max(out.last, at);
    }
    if (env->certificate_chain_size() > 0) {
      if (auto id = certificateIdentity(env->certificate_chain(0)); id.ok()) {
        out.tenants.insert(id->tenant);
      }
    }
    AnalyzedNode node;
    node.snapshot = std::move(*snap);
    node.snapshot_file = member;
    out.nodes.push_back(std::move(node));
    out.inputs.push_back({in.file_bytes, std::move(*env), member});
  }
  if (out.tenants.size() > 1) {
    std::string list;
    for (const auto& t : out.tenants) list += (list.empty() ? "" : ", ") + printable(t, 60);
    return Error{ErrorCode::InvalidArgument, "the snapshots are signed by agents of " +
                                                 std::to_string(out.tenants.size()) + " tenants (" +
                                                 list + "): a bundle covers one tenant's job"};
  }
  return out;
}

// The manifest's head: format, case, job, tenant, window, exporter, options.
v1::BundleManifest manifestHead(const BundleInputs& in, const BundleExportOptions& options,
                                const SnapshotSigner& exporter) {
  v1::BundleManifest manifest;
  manifest.set_format(std::string(kBundleFormat));
  manifest.set_format_version(kBundleFormatVersion);
  manifest.set_case_id(options.case_id);
  manifest.set_job_id(!options.job_id.empty()  ? options.job_id
                      : in.job_ids.size() == 1 ? *in.job_ids.begin()
                                               : std::string());
  manifest.set_tenant(in.tenants.size() == 1 ? *in.tenants.begin() : std::string());
  manifest.set_window_start_unix_ms(in.first);
  manifest.set_window_end_unix_ms(in.last);
  *manifest.mutable_exporter() = identityMessage(exporter.identity());
  manifest.set_ibcollect_version(options.ibcollect_version);
  manifest.set_redacted(options.redact);
  manifest.set_created_unix_ms(options.created_unix_ms);
  if (options.rules.expect_rate_gbps)
    manifest.set_expect_rate_gbps(*options.rules.expect_rate_gbps);
  if (options.rules.expect_busbw_gbs)
    manifest.set_expect_busbw_gbs(*options.rules.expect_busbw_gbs);
  return manifest;
}

// The case's host results the exporter vouches for: host/<host>.json members, each listed
// in manifest.attachments.
Status addExportedHostResults(const BundleExportOptions& options, const SnapshotSigner& exporter,
                              BundleMembers& members, v1::BundleManifest& manifest) {
  for (const auto& h : options.host_results) {
    if (h.bytes.size() > BundleLimits{}.max_member_bytes) {
      return Error{ErrorCode::TooLarge, "the host result of " + printable(h.host, 120) +
                                            " is larger than a member may be"};
    }
    const std::string name = hostMemberName(members, h.host);
    members.emplace(name, h.bytes);
    v1::BundleAttachment* a = manifest.add_attachments();
    a->set_member(name);
    a->set_host(h.host);
    *a->mutable_attached_by() = identityMessage(exporter.identity());
    a->set_attached_at_unix_ms(h.attached_at_unix_ms);
  }
  return Status();
}

}  // namespace

Result<BundleMembers> buildBundle(const std::vector<BundleSnapshotInput>& snapshots,
                                  const BundleExportOptions& options,
                                  const SnapshotSigner& exporter) {
  if (auto st = checkExporterRole(exporter.identity()); !st.ok()) return st.error();
  if (snapshots.empty()) {
    return Error{ErrorCode::InvalidArgument, "a bundle needs at least one snapshot"};
  }
  auto read = readBundleInputs(snapshots);
  if (!read.ok()) return read.error();
  BundleInputs& in = *read;
  auto& nodes = in.nodes;
  // The job's verdict, as `--job`, `compare` and the console judge it (job_verdict.h).
  judgeJob(nodes, {options.rules, {}});
  v1::BundleManifest manifest = manifestHead(in, options, exporter);

  Redactor redactor;
  if (options.redact) {
    // Nodes first, in bundle order (node-001 is the first node), then every other name.
    for (const auto& n : nodes) {
      redactor.addHost(n.label);
      redactor.addHost(n.snapshot.node().hostname());
    }
    for (const auto& n : nodes) redactor.learn(n.snapshot);
  }
  const auto scrub = [&](std::string text) {
    return options.redact ? redactor.redact(text) : text;
  };

  auto inspection = buildPfInspection(nodes, manifest.case_id(), manifest.job_id());
  std::set<std::string> suspects;
  for (const auto& s : inspection.suspects()) suspects.insert(s.node());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto summary = summarizeNode(nodes[i]);
    v1::BundleNode* bn = manifest.add_nodes();
    bn->set_node(nodes[i].label);
    bn->set_member(options.redact ? std::string() : in.inputs[i].member);
    bn->set_snapshot_id(snapshotId(in.inputs[i].envelope));
    bn->set_worst_severity(summary.worst_severity());
    bn->set_worst_code(summary.worst_code());
    bn->set_suspect(suspects.count(nodes[i].label) != 0);
    if (in.inputs[i].envelope.certificate_chain_size() > 0) {
      if (auto id = certificateIdentity(in.inputs[i].envelope.certificate_chain(0)); id.ok()) {
        bn->set_signer(id->subject);
      }
    }
  }

  BundleMembers members;
  if (!options.redact) {
    for (auto& input : in.inputs) members.emplace(input.member, std::move(input.file_bytes));
  }
  const auto report = buildReport(std::move(nodes));
  auto findings_json = renderJson(report);
  if (!findings_json.ok()) return findings_json.error();
  members.emplace(std::string(kFindingsMember), scrub(std::move(*findings_json)));
  members.emplace(std::string(kReportMember),
                  scrub(renderBundleReport(report, manifest, inspection)));
  members.emplace(std::string(kPfInspectionMdMember),
                  scrub(renderPfInspectionMarkdown(inspection)));
  members.emplace(std::string(kPfInspectionJsonMember), scrub(messageToJson(inspection, 2) + "\n"));
  if (options.redact) {
    // The manifest says which node is which only by pseudonym; host results name hosts and
    // stay out.
    for (auto& n : *manifest.mutable_nodes()) {
      n.set_node(redactor.redact(n.node()));
      n.set_signer(redactor.redact(n.signer()));
    }
    if (options.pseudonym_map != nullptr) *options.pseudonym_map = redactor.mapText();
  } else if (auto st = addExportedHostResults(options, exporter, members, manifest); !st.ok()) {
    return st.error();
  }
  listMembers(members, manifest);
  if (auto st = writeSignedManifest(members, manifest, exporter); !st.ok()) return st.error();
  return members;
}

std::string_view bundleProblemName(BundleProblem problem) {
  switch (problem) {
    case BundleProblem::MalformedManifest: return "malformed_manifest";
    case BundleProblem::ManifestSignature: return "manifest_signature";
    case BundleProblem::HashMismatch: return "hash";
    case BundleProblem::SnapshotSignature: return "snapshot_signature";
    case BundleProblem::UnknownMember: return "unknown_member";
    case BundleProblem::MissingMember: return "missing_member";
    case BundleProblem::MalformedMember: return "malformed_member";
    case BundleProblem::SignerRole: return "signer_role";
    case BundleProblem::ManifestClaim: return "manifest_claim";
    case BundleProblem::AttachmentSignature: return "attachment_signature";
    case BundleProblem::AttachmentChain: return "attachment_chain";
  }
  return "unknown";
}

namespace {

// "SHA-256 0a1b… (12 bytes) but manifest.json says 3c4d… (10 bytes)".
std::string hashDifference(std::string_view bytes, const std::string& actual_hash,
                           std::string_view said_by, std::string_view want_hash,
                           uint64_t want_size) {
  return "SHA-256 " + actual_hash.substr(0, 16) + "… (" + std::to_string(bytes.size()) +
         " bytes) but " + std::string(said_by) + " says " + printable(want_hash, 64).substr(0, 16) +
         "… (" + std::to_string(want_size) + " bytes)";
}

// A node's label in the manifest is its name, or "name (tag)" when two inputs share it
// (labelNodes()).
bool labelNames(std::string_view label, std::string_view node) {
  if (label == node) return true;
  return label.size() > node.size() + 3 && startsWith(label, node) &&
         label.substr(node.size(), 2) == " (" && label.back() == ')';
}

// What a snapshot member is, for comparing the manifest's claims with it.
struct SnapshotFacts {
  std::string id;              // SHA-256 of the signed envelope
  std::string node;            // the node it describes ("" when it did not open)
  CertificateIdentity signer;  // filled when the signer's certificate parsed
};

// One verifyBundle pass: what it reads, and what it has learnt so far that later steps need.
struct BundleVerification {
  const BundleMembers& members;
  const SignatureVerifier& verifier;
  std::chrono::system_clock::time_point at;
  BundleCheck& check;
  std::set<std::string, std::less<>> listed;                        // by manifest.json
  std::set<std::string, std::less<>> attached;                      // by a verified record
  std::map<std::string, std::string, std::less<>> attached_by_any;  // member → record
  std::map<std::string, SnapshotFacts, std::less<>> snapshots;      // by member name

  void problem(std::string_view member, BundleProblem p, std::string message) {
    check.problems.push_back({std::string(member), p, std::move(message)});
  }
};

// The exporter's signature over manifest.json, and its role; the exporter becomes the first
// signer.
void checkManifestSignature(BundleVerification& v, const std::string& manifest,
                            const std::string& signature) {
  v.check.manifest_signature =
      verifySignatureRecord(manifest, signature, kManifestSignatureMember, v.verifier, v.at);
  const SignatureCheck& sig = v.check.manifest_signature;
  if (!sig.ok()) {
    std::string message = problemText(sig);
    if (sig.problem == SignatureProblem::BadSignature) {
      message =
          "the signature does not match manifest.json (manifest.json or manifest.sig "
          "was changed); signer " +
          sig.signer.subject;
    }
    v.problem(kManifestSignatureMember, BundleProblem::ManifestSignature, message);
    // Which of the two changed cannot be told: both are named.
    if (sig.problem == SignatureProblem::BadSignature) {
      v.problem(kManifestMember, BundleProblem::ManifestSignature,
                "manifest.json does not match the signature in manifest.sig: nothing it "
                "lists can be trusted");
    }
  }
  BundleSignerCheck exporter;
  exporter.signature_member = std::string(kManifestSignatureMember);
  exporter.covers = std::string(kManifestMember);
  exporter.exporter = true;
  exporter.signature = sig;
  const Status role = checkExporterRole(sig.signer);
  exporter.role_ok = role.ok();
  if (!role.ok() && !sig.signer.subject.empty()) {
    v.problem(kManifestSignatureMember, BundleProblem::SignerRole, role.error().message);
  }
  v.check.signers.push_back(std::move(exporter));
}

// Parses manifest.json into check.manifest; the exporter it names must be the certificate
// that signed it.
void readManifest(BundleVerification& v, const std::string& bytes) {
  auto manifest = parseManifest(bytes);
  if (!manifest.ok()) {
    v.problem(kManifestMember, BundleProblem::MalformedManifest, manifest.error().message);
    return;
  }
  v.check.manifest = std::move(*manifest);
  const SignatureCheck& sig = v.check.manifest_signature;
  if (!sig.signer.subject.empty() && !sameIdentity(v.check.manifest->exporter(), sig.signer)) {
    v.problem(kManifestMember, BundleProblem::ManifestClaim,
              "manifest.json says it was exported by " +
                  (v.check.manifest->exporter().subject().empty()
                       ? std::string("nobody")
                       : printable(v.check.manifest->exporter().subject(), 200)) +
                  " but manifest.sig is signed by " + whoIs(sig.signer));
  }
}

// Every member manifest.json lists, once, present and unchanged; fills `listed`.
void checkListedMembers(BundleVerification& v) {
  for (const auto& m : v.check.manifest->members()) {
    if (!v.listed.insert(m.name()).second) {
      v.problem(m.name(), BundleProblem::MalformedManifest,
                "manifest.json lists " + printable(m.name(), 120) + " twice");
      continue;
    }
    auto it = v.members.find(m.name());
    if (it == v.members.end()) {
      v.problem(m.name(), BundleProblem::MissingMember,
                "listed in manifest.json but not in the bundle");
      continue;
    }
    const std::string hash = sha256Hex(it->second);
    if (hash != m.sha256() || it->second.size() != m.size()) {
      v.problem(m.name(), BundleProblem::HashMismatch,
                hashDifference(it->second, hash, kManifestMember, m.sha256(), m.size()) +
                    ": the member was changed");
    }
  }
}

// Where the walk over the attachments stands: each record binds the state before it.
struct AttachmentWalk {
  std::string manifest_hash;  // SHA-256 of manifest.json ("" when missing)
  std::string previous;       // SHA-256 of the state the next record must follow
  bool broken = false;        // a record is missing: the order after it cannot be checked
};

// One attachment's signature over its record, by a provider or support certificate; false
// when it does not verify.
bool checkAttachmentSignature(BundleVerification& v, const std::string& record_bytes,
                              const std::string& record_name, const std::string& sig_name,
                              BundleSignerCheck& signer) {
  const auto record_sig_it = v.members.find(sig_name);
  if (record_sig_it == v.members.end()) {
    signer.signature.problem = SignatureProblem::Unsigned;
    signer.signature.message = sig_name + " is missing";
    v.problem(sig_name, BundleProblem::MissingMember,
              sig_name + " is missing: nobody vouches for " + record_name);
    return false;
  }
  bool ok = true;
  signer.signature =
      verifySignatureRecord(record_bytes, record_sig_it->second, sig_name, v.verifier, v.at);
  const SignatureCheck& sig = signer.signature;
  if (!sig.ok()) {
    v.problem(sig_name, BundleProblem::AttachmentSignature,
              sig.problem == SignatureProblem::BadSignature
                  ? "the signature does not match " + record_name + " (the record or " + sig_name +
                        " was changed); signer " + sig.signer.subject
                  : problemText(sig));
    ok = false;
  }
  const Status role = checkAttacherRole(sig.signer);
  signer.role_ok = role.ok();
  if (!role.ok() && !sig.signer.subject.empty()) {
    v.problem(sig_name, BundleProblem::SignerRole, role.error().message);
    ok = false;
  }
  return ok;
}

// The record's place: signed by whom it says, numbered n, after the state before it.
bool checkRecordPlace(BundleVerification& v, const v1::BundleAttachment& r, uint32_t n,
                      const std::string& record_name, const std::string& sig_name,
                      const CertificateIdentity& who, const AttachmentWalk& state) {
  bool ok = true;
  const auto chain = [&](std::string why) {
    v.problem(record_name, BundleProblem::AttachmentChain, std::move(why));
    ok = false;
  };
  if (!who.subject.empty() && !sameIdentity(r.attached_by(), who)) {
    v.problem(record_name, BundleProblem::ManifestClaim,
              "says it was attached by " + printable(r.attached_by().subject(), 200) + " but " +
                  sig_name + " is signed by " + whoIs(who));
    ok = false;
  }
  if (r.sequence() != n) {
    chain("says it is attachment " + std::to_string(r.sequence()) + ", not " + std::to_string(n));
  }
  if (r.manifest_sha256() != state.manifest_hash) {
    chain(
        "was attached to another manifest.json (the exporter's manifest was replaced, "
        "or the record comes from another bundle)");
  } else if (state.broken) {
    chain("follows a missing attachment: its place in the order cannot be checked");
  } else if (r.previous_sha256() != state.previous) {
    chain(n == 1 ? std::string("does not follow manifest.json directly")
                 : "does not follow " + attachmentRecordName(n - 1) +
                       ": the attachments were reordered or one before it was replaced");
  }
  return ok;
}

// The one host/ member a record attaches: new, present, unchanged. It counts as attached
// only when the record verified so far (`ok`) and adds no chain problem here.
bool checkAttachedMember(BundleVerification& v, const v1::BundleAttachment& r,
                         const std::string& record_name, bool ok) {
  const auto chain = [&](std::string why) {
    v.problem(record_name, BundleProblem::AttachmentChain, std::move(why));
    return false;
  };
  const std::string& member = r.member();
  if (!checkMemberName(member).ok() || bundleMemberKind(member) != "host") {
    return chain("attaches '" + printable(member, 120) +
                 "': an attachment adds one host/<host>.json result");
  }
  if (v.listed.count(member) != 0) {
    return chain("attaches " + member +
                 ", which manifest.json covers already: an attachment adds a new member and "
                 "never replaces one");
  }
  if (const auto before = v.attached_by_any.find(member); before != v.attached_by_any.end()) {
    return chain("attaches " + member + ", which " + before->second + " attached already");
  }
  v.attached_by_any.emplace(member, record_name);
  const auto m = v.members.find(member);
  if (m == v.members.end()) {
    v.problem(member, BundleProblem::MissingMember,
              "attached by " + record_name + " but not in the bundle");
  } else if (const std::string hash = sha256Hex(m->second);
             hash != r.member_sha256() || m->second.size() != r.member_size()) {
    v.problem(member, BundleProblem::HashMismatch,
              hashDifference(m->second, hash, record_name, r.member_sha256(), r.member_size()) +
                  ": the member was changed after it was attached");
  }
  if (ok) v.attached.insert(member);
  return ok;
}

// Attachment n, whose record is present: its signer joins check.signers, its record
// check.attachments when everything about it verifies.
void checkAttachment(BundleVerification& v, uint32_t n, const std::string& record_bytes,
                     const AttachmentWalk& state) {
  const std::string record_name = attachmentRecordName(n);
  const std::string sig_name = attachmentSignatureName(n);
  bool ok = true;
  BundleSignerCheck signer;
  signer.signature_member = sig_name;
  auto record = parseAttachmentRecord(record_bytes);
  if (!record.ok()) {
    v.problem(record_name, BundleProblem::AttachmentChain, record.error().message);
    ok = false;
  } else {
    signer.covers = record->member();
  }
  ok = checkAttachmentSignature(v, record_bytes, record_name, sig_name, signer) && ok;
  if (record.ok()) {
    ok = checkRecordPlace(v, *record, n, record_name, sig_name, signer.signature.signer, state) &&
         ok;
    ok = checkAttachedMember(v, *record, record_name, ok);
    if (ok) v.check.attachments.push_back(*record);
  }
  v.check.signers.push_back(std::move(signer));
}

// Attachments, in sequence order: each binds the state before it and its one member.
// Only the numbers present are walked: a member named attachments/999999999.json costs
// one problem, not a billion.
void checkAttachments(BundleVerification& v, const std::string& manifest_hash) {
  std::set<uint32_t> numbers;
  for (const auto& [name, bytes] : v.members) {
    if (const uint32_t n = attachmentNumber(name).first; n != 0) numbers.insert(n);
  }
  AttachmentWalk state{manifest_hash, manifest_hash, false};
  uint32_t expected = 1;
  for (const uint32_t n : numbers) {
    if (n != expected) {
      v.problem(attachmentRecordName(expected), BundleProblem::MissingMember,
                "attachment " + std::to_string(expected) + " is missing (the next one present is " +
                    std::to_string(n) + "): the attachments after it cannot be checked in order");
      state.broken = true;
    }
    expected = n + 1;
    const auto record_it = v.members.find(attachmentRecordName(n));
    if (record_it == v.members.end()) {
      v.problem(attachmentRecordName(n), BundleProblem::MissingMember,
                "attachment " + std::to_string(n) +
                    " has a signature but no record: the attachments after it cannot be "
                    "checked in order");
      state.broken = true;
      continue;
    }
    checkAttachment(v, n, record_it->second, state);
    state.previous = sha256Hex(record_it->second);
  }
}

// Members neither manifest.json nor a verified record covers.
void checkUnknownMembers(BundleVerification& v) {
  for (const auto& [name, bytes] : v.members) {
    if (name == kManifestMember || name == kManifestSignatureMember) continue;
    if (attachmentNumber(name).first != 0) continue;  // checked in order
    if (v.listed.count(name) != 0 || v.attached.count(name) != 0) continue;
    const auto by = v.attached_by_any.find(name);
    v.problem(name, BundleProblem::UnknownMember,
              by != v.attached_by_any.end()
                  ? "attached by " + by->second + ", which does not verify: nobody vouches for it"
              : bundleMemberKind(name).empty()
                  ? "not part of the bundle layout and not in manifest.json"
                  : "neither listed in manifest.json nor attached by a signed record (added "
                    "after signing)");
  }
}

// Every snapshot member: signed by the agent of the node it describes; fills `snapshots`
// and check.snapshots.
void checkSnapshots(BundleVerification& v) {
  for (const auto& [name, bytes] : v.members) {
    if (bundleMemberKind(name) != "snapshot") continue;
    auto env = decodeSnapshotFile(bytes);
    if (!env.ok()) {
      v.problem(name, BundleProblem::MalformedMember, env.error().message);
      continue;
    }
    auto sig = v.verifier.verify(*env, v.at);
    SnapshotFacts& facts = v.snapshots[name];
    facts.id = snapshotId(*env);
    facts.signer = sig.signer;
    auto snap = openSnapshot(*env);
    if (snap.ok()) facts.node = nodeName(*snap);
    if (!sig.ok()) {
      v.problem(name, BundleProblem::SnapshotSignature, problemText(sig));
    } else if (!snap.ok()) {
      v.problem(name, BundleProblem::MalformedMember, snap.error().message);
    } else if (auto st = checkSignerNode(snapshotNodeName(snap->node()), sig.signer); !st.ok()) {
      sig.problem = SignatureProblem::CertificateRejected;
      sig.message = st.error().message;
      v.problem(name, BundleProblem::SnapshotSignature, "node_mismatch: " + st.error().message);
    } else if (sig.signer.role != CertificateRole::Agent) {
      v.problem(name, BundleProblem::SignerRole,
                "signed by " + whoIs(sig.signer) +
                    ": only a node's agent certificate signs its "
                    "snapshot");
    }
    v.check.snapshots.emplace_back(name, std::move(sig));
  }
}

// A redacted bundle carries no snapshot and names none: what it says of its nodes is the
// exporter's word, and said so.
void checkRedactedClaims(BundleVerification& v, const v1::BundleManifest& m) {
  for (const auto& [name, facts] : v.snapshots) {
    v.problem(name, BundleProblem::ManifestClaim,
              "manifest.json says the bundle is redacted (snapshots left out), yet it "
              "carries this snapshot");
  }
  for (const auto& n : m.nodes()) {
    if (!n.member().empty()) {
      v.problem(kManifestMember, BundleProblem::ManifestClaim,
                "node " + printable(n.node(), 120) + " names the member " +
                    printable(n.member(), 120) + " in a redacted bundle");
    }
  }
  v.check.unchecked.push_back(
      "tenant '" + printable(m.tenant(), 120) + "', " + std::to_string(m.nodes_size()) +
      " node name(s), their snapshot ids and signers: the bundle is redacted (its signed "
      "snapshots were left out), so these are the exporter's word");
}

// Each node of manifest.json against the snapshot it names. Returns how many nodes name
// each snapshot member.
std::map<std::string, int, std::less<>> checkNodeClaims(BundleVerification& v,
                                                        const v1::BundleManifest& m) {
  std::map<std::string, int, std::less<>> named;
  for (const auto& n : m.nodes()) {
    const std::string label = printable(n.node(), 120);
    const auto it = v.snapshots.find(n.member());
    if (it == v.snapshots.end()) {
      v.problem(kManifestMember, BundleProblem::ManifestClaim,
                "node " + label + " names the snapshot " +
                    (n.member().empty() ? std::string("''") : printable(n.member(), 120)) +
                    ", which the bundle does not carry as a readable snapshot");
      continue;
    }
    ++named[it->first];
    const SnapshotFacts& facts = it->second;
    if (facts.id != n.snapshot_id()) {
      v.problem(it->first, BundleProblem::ManifestClaim,
                "snapshot id " + facts.id.substr(0, 16) + "… but manifest.json says node " + label +
                    " has snapshot " + printable(n.snapshot_id(), 64).substr(0, 16) +
                    "…: another snapshot was put in");
    }
    if (!facts.node.empty() && !labelNames(n.node(), facts.node)) {
      v.problem(it->first, BundleProblem::ManifestClaim,
                "describes node '" + printable(facts.node, 120) + "' but manifest.json calls it " +
                    label);
    }
    if (!facts.signer.subject.empty() && facts.signer.subject != n.signer()) {
      v.problem(it->first, BundleProblem::ManifestClaim,
                "signed by " + printable(facts.signer.subject, 200) +
                    " but manifest.json says node " + label + " was signed by " +
                    printable(n.signer(), 200));
    }
  }
  return named;
}

// Every snapshot is exactly one node, and all are signed by agents of the manifest's tenant.
void checkSnapshotClaims(BundleVerification& v, const v1::BundleManifest& m,
                         std::map<std::string, int, std::less<>>& named) {
  std::set<std::string> tenants;
  for (const auto& [name, facts] : v.snapshots) {
    if (named[name] == 0) {
      v.problem(name, BundleProblem::ManifestClaim, "is none of manifest.json's nodes");
    } else if (named[name] > 1) {
      v.problem(name, BundleProblem::ManifestClaim,
                "is named by " + std::to_string(named[name]) + " of manifest.json's nodes");
    }
    if (facts.signer.subject.empty()) continue;
    tenants.insert(facts.signer.tenant);
    if (!m.tenant().empty() && facts.signer.tenant != m.tenant()) {
      v.problem(name, BundleProblem::ManifestClaim,
                "signed by an agent of tenant '" + printable(facts.signer.tenant, 120) +
                    "' but manifest.json says the bundle is tenant '" + printable(m.tenant(), 120) +
                    "''s");
    }
  }
  if (tenants.size() > 1) {
    std::string list;
    for (const auto& t : tenants) list += (list.empty() ? "" : ", ") + printable(t, 60);
    v.problem(kManifestMember, BundleProblem::ManifestClaim,
              "the snapshots are signed by agents of " + std::to_string(tenants.size()) +
                  " tenants (" + list + "): a bundle covers one tenant");
  } else if (tenants.size() == 1 && m.tenant() != *tenants.begin()) {
    v.problem(kManifestMember, BundleProblem::ManifestClaim,
              "manifest.json says tenant '" + printable(m.tenant(), 120) +
                  "' but its snapshots are signed by tenant '" + printable(*tenants.begin(), 120) +
                  "'");
  }
}

// What the manifest claims, against the members.
void checkManifestClaims(BundleVerification& v, const v1::BundleManifest& m) {
  for (const auto& a : m.attachments()) {
    if (v.listed.count(a.member()) == 0 || bundleMemberKind(a.member()) != "host") {
      v.problem(kManifestMember, BundleProblem::ManifestClaim,
                "manifest.json records the host result " + printable(a.member(), 120) +
                    " but does not list it as a host/ member");
    }
  }
  if (m.redacted()) {
    checkRedactedClaims(v, m);
    return;
  }
  auto named = checkNodeClaims(v, m);
  checkSnapshotClaims(v, m, named);
}

}  // namespace

BundleCheck verifyBundle(const BundleMembers& members, const SignatureVerifier& verifier,
                         std::chrono::system_clock::time_point at) {
  BundleCheck check;
  BundleVerification v{members, verifier, at, check, {}, {}, {}, {}};
  auto manifest_it = members.find(kManifestMember);
  auto sig_it = members.find(kManifestSignatureMember);

  // The exporter's signature first: a manifest nobody vouches for is still parsed to name
  // what else is wrong, but its failure is reported.
  if (sig_it == members.end()) {
    v.problem(kManifestSignatureMember, BundleProblem::MissingMember,
              "manifest.sig is missing: nobody vouches for this bundle");
  } else if (manifest_it != members.end()) {
    checkManifestSignature(v, manifest_it->second, sig_it->second);
  }
  if (manifest_it == members.end()) {
    v.problem(kManifestMember, BundleProblem::MissingMember,
              "manifest.json is missing: the members cannot be checked");
  } else {
    readManifest(v, manifest_it->second);
  }
  if (check.manifest) checkListedMembers(v);
  checkAttachments(v,
                   manifest_it != members.end() ? sha256Hex(manifest_it->second) : std::string());
  if (check.manifest) checkUnknownMembers(v);
  checkSnapshots(v);
  if (check.manifest) checkManifestClaims(v, *check.manifest);

  std::stable_sort(check.problems.begin(), check.problems.end(),
                   [](const BundleMemberProblem& a, const BundleMemberProblem& b) {
                     return a.member < b.member;
                   });
  return check;
}

Result<std::string> attachHostResult(BundleMembers& members, const BundleHostResult& result,
                                     const SnapshotSigner& signer,
                                     const SignatureVerifier& verifier,
                                     std::chrono::system_clock::time_point at,
                                     BundleCheck* verified) {
  if (auto st = checkAttacherRole(signer.identity()); !st.ok()) return st.error();
  if (result.bytes.size() > BundleLimits{}.max_member_bytes) {
    return Error{ErrorCode::TooLarge, "the host result of " + printable(result.host, 120) +
                                          " is larger than a member may be"};
  }
  BundleCheck check = verifyBundle(members, verifier, at);
  if (!check.ok()) {
    std::string failed;
    for (std::size_t i = 0; i < check.problems.size() && i < 3; ++i) {
      const auto& p = check.problems[i];
      failed += (i == 0 ? ": " : "; ") + printable(p.member, 120) + " " +
                std::string(bundleProblemName(p.problem));
    }
    Error error{ErrorCode::InvalidArgument,
                "the bundle does not verify (" + std::to_string(check.problems.size()) +
                    " check(s) failed" + failed + "): nothing was attached"};
    if (verified != nullptr) *verified = std::move(check);
    return error;
  }
  const auto sequence = static_cast<uint32_t>(check.attachments.size() + 1);
  if (verified != nullptr) *verified = std::move(check);
  const std::string name = hostMemberName(members, result.host);
  const std::string manifest_hash = sha256Hex(members.at(std::string(kManifestMember)));
  v1::BundleAttachment record;
  record.set_member(name);
  record.set_host(result.host);
  *record.mutable_attached_by() = identityMessage(signer.identity());
  record.set_attached_at_unix_ms(result.attached_at_unix_ms);
  record.set_sequence(sequence);
  record.set_manifest_sha256(manifest_hash);
  record.set_previous_sha256(
      sequence == 1 ? manifest_hash : sha256Hex(members.at(attachmentRecordName(sequence - 1))));
  record.set_member_sha256(sha256Hex(result.bytes));
  record.set_member_size(result.bytes.size());
  std::string json = messageToJson(record, 2) + "\n";
  auto sig = signManifest(json, signer);
  if (!sig.ok()) return sig.error();
  members.emplace(name, result.bytes);
  members.emplace(attachmentRecordName(sequence), std::move(json));
  members.emplace(attachmentSignatureName(sequence), std::move(*sig));
  return name;
}

}  // namespace ibc::core
