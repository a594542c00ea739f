// Checking an escalation bundle (docs/formats.md): BundleVerifier takes the members as they
// arrive and verifyBundle is it over a whole map. Building and attaching are bundle.cpp's.

#include <algorithm>
#include <map>
#include <set>

#include "bundle_internal.h"
#include "ibc/core/bundle.h"
#include "ibc/core/encoding.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

using bundle_detail::attachmentNumber;
using bundle_detail::whoIs;

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
    case BundleProblem::Unread: return "unread";
  }
  return "unknown";
}

namespace {

std::string problemText(const SignatureCheck& c) {
  return std::string(signatureProblemName(c.problem)) + ": " + c.message;
}

bool sameIdentity(const v1::BundleIdentity& claimed, const CertificateIdentity& actual) {
  return claimed.subject() == actual.subject && claimed.tenant() == actual.tenant &&
         claimed.role() == certificateRoleName(actual.role) && claimed.name() == actual.name;
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

// A member as verification remembers it: its digest (every member), its bytes only when a
// later step reads them (manifest.json, manifest.sig, attachment records and signatures).
struct MemberDigest {
  std::string sha256;
  uint64_t size = 0;
};

// "SHA-256 0a1b… (12 bytes) but manifest.json says 3c4d… (10 bytes)".
std::string hashDifference(const MemberDigest& actual, std::string_view said_by,
                           std::string_view want_hash, uint64_t want_size) {
  return "SHA-256 " + actual.sha256.substr(0, 16) + "… (" + std::to_string(actual.size) +
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

}  // namespace

// One verification: what has arrived, and what it has learnt so far that later steps need.
struct BundleVerifier::State {
  State(const SignatureVerifier& v, std::chrono::system_clock::time_point when)
      : verifier(v), at(when) {}

  const SignatureVerifier& verifier;
  std::chrono::system_clock::time_point at;
  BundleCheck check;
  std::map<std::string, MemberDigest, std::less<>> digests;         // every member, by name
  BundleMembers kept;                                               // what later steps read
  std::set<std::string, std::less<>> listed;                        // by manifest.json
  std::set<std::string, std::less<>> attached;                      // by a verified record
  std::map<std::string, std::string, std::less<>> attached_by_any;  // member → record
  std::map<std::string, SnapshotFacts, std::less<>> snapshots;      // by member name
  std::vector<BundleMemberProblem> snapshot_problems;               // reported after members'
  std::map<std::string, uint64_t, std::less<>> vouched;             // verified manifest: sizes
  bool manifest_checked = false;
  bool manifest_verified = false;

  void problem(std::string_view member, BundleProblem p, std::string message) {
    check.problems.push_back({std::string(member), p, std::move(message)});
  }
};

namespace {

using State = BundleVerifier::State;

// The exporter's signature over manifest.json, and its role; the exporter becomes the first
// signer.
void checkManifestSignature(State& v, const std::string& manifest, const std::string& signature) {
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
void readManifest(State& v, const std::string& bytes) {
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
void checkListedMembers(State& v) {
  for (const auto& m : v.check.manifest->members()) {
    if (!v.listed.insert(m.name()).second) {
      v.problem(m.name(), BundleProblem::MalformedManifest,
                "manifest.json lists " + printable(m.name(), 120) + " twice");
      continue;
    }
    auto it = v.digests.find(m.name());
    if (it == v.digests.end()) {
      v.problem(m.name(), BundleProblem::MissingMember,
                "listed in manifest.json but not in the bundle");
      continue;
    }
    if (it->second.sha256 != m.sha256() || it->second.size != m.size()) {
      v.problem(m.name(), BundleProblem::HashMismatch,
                hashDifference(it->second, kManifestMember, m.sha256(), m.size()) +
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
bool checkAttachmentSignature(State& v, const std::string& record_bytes,
                              const std::string& record_name, const std::string& sig_name,
                              BundleSignerCheck& signer) {
  const auto record_sig_it = v.kept.find(sig_name);
  if (record_sig_it == v.kept.end()) {
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
bool checkRecordPlace(State& v, const v1::BundleAttachment& r, uint32_t n,
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
bool checkAttachedMember(State& v, const v1::BundleAttachment& r, const std::string& record_name,
                         bool ok) {
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
  const auto m = v.digests.find(member);
  if (m == v.digests.end()) {
    v.problem(member, BundleProblem::MissingMember,
              "attached by " + record_name + " but not in the bundle");
  } else if (m->second.sha256 != r.member_sha256() || m->second.size != r.member_size()) {
    v.problem(member, BundleProblem::HashMismatch,
              hashDifference(m->second, record_name, r.member_sha256(), r.member_size()) +
                  ": the member was changed after it was attached");
  }
  if (ok) v.attached.insert(member);
  return ok;
}

// Attachment n, whose record is present: its signer joins check.signers, its record
// check.attachments when everything about it verifies.
void checkAttachment(State& v, uint32_t n, const std::string& record_bytes,
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
void checkAttachments(State& v, const std::string& manifest_hash) {
  std::set<uint32_t> numbers;
  for (const auto& [name, digest] : v.digests) {
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
    const auto record_it = v.kept.find(attachmentRecordName(n));
    if (record_it == v.kept.end()) {
      v.problem(attachmentRecordName(n), BundleProblem::MissingMember,
                "attachment " + std::to_string(n) +
                    " has a signature but no record: the attachments after it cannot be "
                    "checked in order");
      state.broken = true;
      continue;
    }
    checkAttachment(v, n, record_it->second, state);
    state.previous = v.digests.at(record_it->first).sha256;
  }
}

// Members neither manifest.json nor a verified record covers.
void checkUnknownMembers(State& v) {
  for (const auto& [name, digest] : v.digests) {
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

// One snapshot member, on arrival: signed by the agent of the node it describes; fills
// `snapshots`, check.snapshots and `snapshot_problems`.
void checkSnapshot(State& v, std::string_view name, std::string_view bytes) {
  const auto problem = [&](BundleProblem p, std::string message) {
    v.snapshot_problems.push_back({std::string(name), p, std::move(message)});
  };
  auto env = decodeSnapshotFile(bytes);
  if (!env.ok()) {
    problem(BundleProblem::MalformedMember, env.error().message);
    return;
  }
  auto sig = v.verifier.verify(*env, v.at);
  SnapshotFacts& facts = v.snapshots[std::string(name)];
  facts.id = snapshotId(*env);
  facts.signer = sig.signer;
  auto snap = openSnapshot(*env);
  if (snap.ok()) facts.node = nodeName(*snap);
  if (!sig.ok()) {
    problem(BundleProblem::SnapshotSignature, problemText(sig));
  } else if (!snap.ok()) {
    problem(BundleProblem::MalformedMember, snap.error().message);
  } else if (auto st = checkSignerNode(snapshotNodeName(snap->node()), sig.signer); !st.ok()) {
    sig.problem = SignatureProblem::CertificateRejected;
    sig.message = st.error().message;
    problem(BundleProblem::SnapshotSignature, "node_mismatch: " + st.error().message);
  } else if (sig.signer.role != CertificateRole::Agent) {
    problem(BundleProblem::SignerRole, "signed by " + whoIs(sig.signer) +
                                           ": only a node's agent certificate signs its "
                                           "snapshot");
  }
  v.check.snapshots.emplace_back(std::string(name), std::move(sig));
}

// A redacted bundle carries no snapshot and names none: what it says of its nodes is the
// exporter's word, and said so.
void checkRedactedClaims(State& v, const v1::BundleManifest& m) {
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
std::map<std::string, int, std::less<>> checkNodeClaims(State& v, const v1::BundleManifest& m) {
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
void checkSnapshotClaims(State& v, const v1::BundleManifest& m,
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
void checkManifestClaims(State& v, const v1::BundleManifest& m) {
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

// manifest.json and manifest.sig, once both are in: the exporter's signature, then the
// manifest itself; a manifest that verified and parsed vouches for the sizes it lists.
void checkManifest(State& v) {
  const auto manifest = v.kept.find(kManifestMember);
  const auto sig = v.kept.find(kManifestSignatureMember);
  v.manifest_checked = true;
  checkManifestSignature(v, manifest->second, sig->second);
  readManifest(v, manifest->second);
  const BundleSignerCheck& exporter = v.check.signers.front();
  if (!v.check.manifest || !exporter.signature.ok() || !exporter.role_ok) return;
  v.manifest_verified = true;
  for (const auto& m : v.check.manifest->members()) v.vouched.emplace(m.name(), m.size());
}

// What the arrival order left unchecked: a missing manifest.json or manifest.sig.
void checkManifestPresence(State& v) {
  // The exporter's signature first: a manifest nobody vouches for is still parsed to name
  // what else is wrong, but its failure is reported.
  const bool has_manifest = v.kept.count(kManifestMember) != 0;
  if (v.kept.count(kManifestSignatureMember) == 0) {
    v.problem(kManifestSignatureMember, BundleProblem::MissingMember,
              "manifest.sig is missing: nobody vouches for this bundle");
  }
  if (!has_manifest) {
    v.problem(kManifestMember, BundleProblem::MissingMember,
              "manifest.json is missing: the members cannot be checked");
  } else if (!v.manifest_checked) {
    readManifest(v, v.kept.find(kManifestMember)->second);
  }
}

bool keptForLater(std::string_view name) {
  return name == kManifestMember || name == kManifestSignatureMember ||
         attachmentNumber(name).first != 0;
}

}  // namespace

BundleVerifier::BundleVerifier(const SignatureVerifier& verifier,
                               std::chrono::system_clock::time_point at)
    : s_(std::make_unique<State>(verifier, at)) {}

BundleVerifier::~BundleVerifier() = default;

void BundleVerifier::add(std::string_view name, std::string_view bytes) {
  State& v = *s_;
  if (v.digests.count(name) != 0) {
    v.problem(name, BundleProblem::MalformedMember,
              "appears twice: which copy counts would be ambiguous");
    return;
  }
  v.digests.emplace(std::string(name), MemberDigest{sha256Hex(bytes), bytes.size()});
  if (keptForLater(name)) v.kept.emplace(std::string(name), std::string(bytes));
  if (bundleMemberKind(name) == "snapshot") checkSnapshot(v, name, bytes);
  if (!v.manifest_checked && v.kept.count(kManifestMember) != 0 &&
      v.kept.count(kManifestSignatureMember) != 0) {
    checkManifest(v);
  }
}

bool BundleVerifier::manifestVerified() const { return s_->manifest_verified; }

bool BundleVerifier::vouches(std::string_view name, std::uint64_t size) const {
  const auto it = s_->vouched.find(name);
  return it != s_->vouched.end() && it->second == size;
}

BundleCheck BundleVerifier::finish(std::string_view stopped_at, std::string_view why_stopped) {
  State& v = *s_;
  // Stopped early, only what was read is judged: nothing is "missing" or "unknown", no claim
  // about every member can be checked.
  const bool complete = stopped_at.empty();
  if (complete) {
    checkManifestPresence(v);
    if (v.check.manifest) checkListedMembers(v);
    const auto manifest = v.digests.find(kManifestMember);
    checkAttachments(v, manifest != v.digests.end() ? manifest->second.sha256 : std::string());
    if (v.check.manifest) checkUnknownMembers(v);
  }
  for (auto& p : v.snapshot_problems) v.check.problems.push_back(std::move(p));
  if (!complete) {
    v.problem(stopped_at, BundleProblem::Unread, std::string(why_stopped));
  } else if (v.check.manifest) {
    checkManifestClaims(v, *v.check.manifest);
  }

  BundleCheck check = std::move(v.check);
  std::stable_sort(check.problems.begin(), check.problems.end(),
                   [](const BundleMemberProblem& a, const BundleMemberProblem& b) {
                     return a.member < b.member;
                   });
  std::stable_sort(check.snapshots.begin(), check.snapshots.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return check;
}

BundleCheck verifyBundle(const BundleMembers& members, const SignatureVerifier& verifier,
                         std::chrono::system_clock::time_point at) {
  BundleVerifier v(verifier, at);
  for (const auto& [name, bytes] : members) v.add(name, bytes);
  return v.finish();
}

}  // namespace ibc::core
