#include "ibc/core/bundle.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
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
  return {};
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

Result<BundleMembers> buildBundle(const std::vector<BundleSnapshotInput>& snapshots,
                                  const BundleExportOptions& options,
                                  const SnapshotSigner& exporter) {
  if (snapshots.empty()) {
    return Error{ErrorCode::InvalidArgument, "a bundle needs at least one snapshot"};
  }
  struct Input {
    std::string file_bytes;
    v1::SignedSnapshot envelope;
    std::string member;
  };
  std::vector<Input> inputs;
  std::vector<AnalyzedNode> nodes;
  std::set<std::string> used;
  std::map<std::string, int> next_suffix;  // per stem: the next "-N" to try (from 2)
  std::set<std::string> job_ids;
  std::set<std::string> tenants;
  int64_t first = 0;
  int64_t last = 0;
  for (const auto& in : snapshots) {
    auto env = decodeSnapshotFile(in.file_bytes);
    if (!env.ok()) return Error{ErrorCode::Malformed, in.origin + ": " + env.error().message};
    auto snap = openSnapshot(*env);
    if (!snap.ok()) return Error{ErrorCode::Malformed, in.origin + ": " + snap.error().message};
    // Member names are unique: a second snapshot of one node (before/after) gets "-2".
    const std::string stem = safeStem(snapshotNodeName(snap->node()));
    std::string member = std::string(kSnapshotsDir) + stem + ".ibsnap";
    int& n = next_suffix.try_emplace(stem, 2).first->second;
    for (; used.count(member) != 0; ++n) {
      member = std::string(kSnapshotsDir) + stem + "-" + std::to_string(n) + ".ibsnap";
    }
    used.insert(member);
    if (!snap->node().job_id().empty()) job_ids.insert(snap->node().job_id());
    const int64_t at = snap->node().collected_at_unix_ms();
    if (at > 0) {
      first = first == 0 ? at : std::min(first, at);
      last = std::max(last, at);
    }
    if (env->certificate_chain_size() > 0) {
      if (auto id = certificateIdentity(env->certificate_chain(0)); id.ok()) {
        tenants.insert(id->tenant);
      }
    }
    AnalyzedNode node;
    node.snapshot = std::move(*snap);
    node.snapshot_file = member;
    nodes.push_back(std::move(node));
    inputs.push_back({in.file_bytes, std::move(*env), member});
  }
  // The job's verdict, as `--job`, `compare` and the console judge it (job_verdict.h).
  judgeJob(nodes, {options.rules, {}});

  v1::BundleManifest manifest;
  manifest.set_format(std::string(kBundleFormat));
  manifest.set_format_version(kBundleFormatVersion);
  manifest.set_case_id(options.case_id);
  manifest.set_job_id(!options.job_id.empty() ? options.job_id
                      : job_ids.size() == 1   ? *job_ids.begin()
                                              : std::string());
  manifest.set_tenant(tenants.size() == 1 ? *tenants.begin() : std::string());
  manifest.set_window_start_unix_ms(first);
  manifest.set_window_end_unix_ms(last);
  *manifest.mutable_exporter() = identityMessage(exporter.identity());
  manifest.set_ibcollect_version(options.ibcollect_version);
  manifest.set_redacted(options.redact);
  manifest.set_created_unix_ms(options.created_unix_ms);
  if (options.rules.expect_rate_gbps)
    manifest.set_expect_rate_gbps(*options.rules.expect_rate_gbps);
  if (options.rules.expect_busbw_gbs)
    manifest.set_expect_busbw_gbs(*options.rules.expect_busbw_gbs);

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
    bn->set_member(options.redact ? std::string() : inputs[i].member);
    bn->set_snapshot_id(snapshotId(inputs[i].envelope));
    bn->set_worst_severity(summary.worst_severity());
    bn->set_worst_code(summary.worst_code());
    bn->set_suspect(suspects.count(nodes[i].label) != 0);
    if (inputs[i].envelope.certificate_chain_size() > 0) {
      if (auto id = certificateIdentity(inputs[i].envelope.certificate_chain(0)); id.ok()) {
        bn->set_signer(id->subject);
      }
    }
  }

  BundleMembers members;
  if (!options.redact) {
    for (auto& in : inputs) members.emplace(in.member, std::move(in.file_bytes));
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
    // The manifest says which node is which only by pseudonym.
    for (auto& n : *manifest.mutable_nodes()) {
      n.set_node(redactor.redact(n.node()));
      n.set_signer(redactor.redact(n.signer()));
    }
  }
  listMembers(members, manifest);
  if (auto st = writeSignedManifest(members, manifest, exporter); !st.ok()) return st.error();
  return members;
}

Status addHostMember(BundleMembers& members, std::string_view name, std::string bytes,
                     std::string_view host, const SnapshotSigner& signer, int64_t now_unix_ms) {
  if (auto st = checkMemberName(name); !st.ok()) return st;
  if (bundleMemberKind(name) != "host") {
    return Error{ErrorCode::InvalidArgument,
                 "host results go under host/<name>.json, not '" + printable(name, 120) + "'"};
  }
  if (bytes.size() > BundleLimits{}.max_member_bytes) {
    return Error{ErrorCode::TooLarge, std::string(name) + " is larger than a member may be"};
  }
  auto it = members.find(kManifestMember);
  if (it == members.end()) return Error{ErrorCode::Malformed, "the bundle has no manifest.json"};
  auto manifest = parseManifest(it->second);
  if (!manifest.ok()) return manifest.error();
  members[std::string(name)] = std::move(bytes);
  auto* attachments = manifest->mutable_attachments();
  attachments->erase(
      std::remove_if(attachments->begin(), attachments->end(),
                     [&](const v1::BundleAttachment& a) { return a.member() == name; }),
      attachments->end());
  v1::BundleAttachment* a = manifest->add_attachments();
  a->set_member(std::string(name));
  a->set_host(std::string(host));
  *a->mutable_attached_by() = identityMessage(signer.identity());
  a->set_attached_at_unix_ms(now_unix_ms);
  listMembers(members, *manifest);
  return writeSignedManifest(members, *manifest, signer);
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
  }
  return "unknown";
}

BundleCheck verifyBundle(const BundleMembers& members, const SignatureVerifier& verifier,
                         std::chrono::system_clock::time_point at) {
  BundleCheck check;
  const auto problem = [&](std::string_view member, BundleProblem p, std::string message) {
    check.problems.push_back({std::string(member), p, std::move(message)});
  };
  auto manifest_it = members.find(kManifestMember);
  auto sig_it = members.find(kManifestSignatureMember);

  // The signature first: a manifest nobody vouches for is still parsed to name what else
  // is wrong, but its failure is reported.
  if (sig_it == members.end()) {
    problem(kManifestSignatureMember, BundleProblem::MissingMember,
            "manifest.sig is missing: nobody vouches for this bundle");
  } else if (manifest_it != members.end()) {
    auto sig = parseManifestSignature(sig_it->second);
    if (!sig.ok()) {
      check.manifest_signature.problem = SignatureProblem::MalformedChain;
      check.manifest_signature.message = sig.error().message;
      problem(kManifestSignatureMember, BundleProblem::ManifestSignature, sig.error().message);
    } else {
      v1::SignedSnapshot env;
      env.set_snapshot(manifest_it->second);
      env.set_signature_algorithm(sig->signature_algorithm());
      env.set_signature(sig->signature());
      for (const auto& der : sig->certificate_chain()) env.add_certificate_chain(der);
      check.manifest_signature = verifier.verify(env, at);
      if (!check.manifest_signature.ok()) {
        std::string message = problemText(check.manifest_signature);
        if (check.manifest_signature.problem == SignatureProblem::BadSignature) {
          message =
              "the signature does not match manifest.json (manifest.json or manifest.sig "
              "was changed); signer " +
              check.manifest_signature.signer.subject;
        }
        problem(kManifestSignatureMember, BundleProblem::ManifestSignature, message);
        // Which of the two changed cannot be told: both are named.
        if (check.manifest_signature.problem == SignatureProblem::BadSignature) {
          problem(kManifestMember, BundleProblem::ManifestSignature,
                  "manifest.json does not match the signature in manifest.sig: nothing it "
                  "lists can be trusted");
        }
      }
    }
  }
  if (manifest_it == members.end()) {
    problem(kManifestMember, BundleProblem::MissingMember,
            "manifest.json is missing: the members cannot be checked");
  } else {
    auto manifest = parseManifest(manifest_it->second);
    if (!manifest.ok()) {
      problem(kManifestMember, BundleProblem::MalformedManifest, manifest.error().message);
    } else {
      check.manifest = std::move(*manifest);
    }
  }

  std::set<std::string, std::less<>> listed;
  if (check.manifest) {
    for (const auto& m : check.manifest->members()) {
      if (!listed.insert(m.name()).second) {
        problem(m.name(), BundleProblem::MalformedManifest,
                "manifest.json lists " + printable(m.name(), 120) + " twice");
        continue;
      }
      auto it = members.find(m.name());
      if (it == members.end()) {
        problem(m.name(), BundleProblem::MissingMember,
                "listed in manifest.json but not in the bundle");
        continue;
      }
      const std::string hash = sha256Hex(it->second);
      if (hash != m.sha256() || it->second.size() != m.size()) {
        problem(m.name(), BundleProblem::HashMismatch,
                "SHA-256 " + hash.substr(0, 16) + "… (" + std::to_string(it->second.size()) +
                    " bytes) but manifest.json says " + printable(m.sha256(), 64).substr(0, 16) +
                    "… (" + std::to_string(m.size()) + " bytes): the member was changed");
      }
    }
    for (const auto& [name, bytes] : members) {
      if (name == kManifestMember || name == kManifestSignatureMember) continue;
      if (listed.count(name) == 0) {
        problem(name, BundleProblem::UnknownMember,
                bundleMemberKind(name).empty()
                    ? "not part of the bundle layout and not in manifest.json"
                    : "not listed in manifest.json (added after signing)");
      }
    }
  }

  for (const auto& [name, bytes] : members) {
    if (bundleMemberKind(name) != "snapshot") continue;
    auto env = decodeSnapshotFile(bytes);
    if (!env.ok()) {
      problem(name, BundleProblem::MalformedMember, env.error().message);
      continue;
    }
    auto sig = verifier.verify(*env, at);
    if (!sig.ok()) {
      problem(name, BundleProblem::SnapshotSignature, problemText(sig));
    } else if (auto snap = openSnapshot(*env); !snap.ok()) {
      problem(name, BundleProblem::MalformedMember, snap.error().message);
    } else if (auto st = checkSignerNode(snapshotNodeName(snap->node()), sig.signer); !st.ok()) {
      sig.problem = SignatureProblem::CertificateRejected;
      sig.message = st.error().message;
      problem(name, BundleProblem::SnapshotSignature, "node_mismatch: " + st.error().message);
    }
    check.snapshots.emplace_back(name, std::move(sig));
  }
  std::stable_sort(check.problems.begin(), check.problems.end(),
                   [](const BundleMemberProblem& a, const BundleMemberProblem& b) {
                     return a.member < b.member;
                   });
  return check;
}

}  // namespace ibc::core
