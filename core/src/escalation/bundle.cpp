#include "ibc/core/bundle.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include "bundle_internal.h"
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

}  // namespace

namespace bundle_detail {

std::string whoIs(const CertificateIdentity& id) {
  return (id.subject.empty() ? std::string("an unreadable certificate")
                             : printable(id.subject, 200)) +
         " (role " + std::string(certificateRoleName(id.role)) + ")";
}

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

}  // namespace bundle_detail

using bundle_detail::attachmentNumber;
using bundle_detail::whoIs;

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
