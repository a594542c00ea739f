// `ibcollect bundle export|verify|show`: the escalation bundle of docs/formats.md.

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <optional>

#include "ibc/agent/cli_transport.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/bundle_judgement.h"
#include "ibc/core/findings.h"
#include "ibc/core/json.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::agent::cli {

namespace v1 = ::ibcollect::v1;

namespace {

constexpr const char* kBundleExitCodes =
    "Exit codes: 0 done (verify: every check holds), 3 usage error (export: a\n"
    "certificate that is not a support certificate), 4 an input could not be read or\n"
    "fetched or the bundle could not be written, 5 (verify) a signature, hash,\n"
    "certificate or claim of the manifest did not verify: each failing member is\n"
    "named.";

struct ExportArgs {
  std::vector<std::string> files;
  std::string output;
  std::string job;
  std::string tenant;
  std::string case_id;
  bool redact = false;
  bool force = false;
  TransportArgs transport;
};

struct VerifyBundleArgs {
  std::string bundle;
  TransportArgs transport;
};

struct ShowArgs {
  std::string bundle;
  std::string format = "text";
};

std::string utc(int64_t ms) {
  if (ms <= 0) return "unknown";
  const std::time_t t = ms / 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

core::Result<std::string> readBundleBytes(CliEnvironment& env, const std::string& path) {
  auto bytes = env.files.readFile(path, ibc::bundle::kMaxBundleFileBytes);
  if (!bytes.ok()) return core::Error{bytes.error().code, path + ": " + bytes.error().message};
  return bytes;
}

// A bundle read and verified while it inflates, within the reader's memory bound.
core::Result<ibc::bundle::VerifiedBundle> readVerified(CliEnvironment& env, const std::string& path,
                                                       const core::SignatureVerifier& verifier) {
  auto bytes = readBundleBytes(env, path);
  if (!bytes.ok()) return bytes.error();
  auto read = ibc::bundle::readVerifiedBundle(*bytes, verifier, env.clock.now());
  if (!read.ok()) return core::Error{read.error().code, path + ": " + read.error().message};
  return read;
}

// What `show` reads, unverified: every member's size, and the bytes of only what it prints
// from (manifest.json, findings.json, attachment records); the rest (snapshots, report,
// runbook, host results) is passed over, never held. What it holds may not pass twice a
// member's bound (BundleLimits::max_member_bytes: a manifest and a findings.json of a large
// job): nothing vouches for it here.
struct ShownBundle {
  std::map<std::string, std::uint64_t> sizes;
  core::BundleMembers members;
};
core::Result<ShownBundle> readForShow(CliEnvironment& env, const std::string& path) {
  auto bytes = readBundleBytes(env, path);
  if (!bytes.ok()) return bytes.error();
  const core::BundleLimits limits;
  ShownBundle out;
  std::uint64_t held = 0;
  std::string too_much;
  auto st = ibc::bundle::streamBundleArchive(
      *bytes, limits,
      [&](const std::string& name, std::uint64_t size) {
        out.sizes[name] = size;
        const std::string_view kind = core::bundleMemberKind(name);
        if (kind != "manifest" && kind != "findings" && kind != "attachment") {
          return ibc::bundle::MemberAction::Skip;
        }
        if (held + size > 2 * limits.max_member_bytes) {
          too_much = name;
          return ibc::bundle::MemberAction::Stop;
        }
        held += size;
        return ibc::bundle::MemberAction::Read;
      },
      [&](std::string name, std::string data) {
        out.members.emplace(std::move(name), std::move(data));
      });
  if (!st.ok()) return core::Error{st.error().code, path + ": " + st.error().message};
  if (!too_much.empty()) {
    return core::Error{core::ErrorCode::TooLarge,
                       path + ": the members `show` reads pass " +
                           std::to_string((2 * limits.max_member_bytes) >> 20) + " MiB at '" +
                           core::printable(too_much, 120) +
                           "': refused (not a bundle ibcollect writes)"};
  }
  return out;
}

std::string roleName(const std::string& role) { return role.empty() ? "unknown role" : role; }

// Every signer of a verified (or failed) bundle with its role, one line each.
void printSigners(std::ostream& o, const core::BundleCheck& check) {
  o << "signers (" << check.signers.size() << "):\n";
  uint32_t n = 0;
  for (const auto& s : check.signers) {
    const auto& who = s.signature.signer;
    o << "  " << (s.exporter ? std::string("exporter") : "attachment " + std::to_string(++n))
      << "  " << (who.subject.empty() ? std::string("-") : core::printable(who.subject, 200))
      << " (" << core::certificateRoleName(who.role) << ")  signed "
      << (s.covers.empty() ? std::string("-") : core::printable(s.covers, 200))
      << (s.signature.ok() && s.role_ok ? "" : "  NOT VERIFIED") << "\n";
  }
}

// Usage mistakes found before any certificate is loaded or anything fetched.
int checkExportArgs(CliEnvironment& env, const ExportArgs& a, bool from_case) {
  if (a.files.empty() && a.job.empty() && !from_case) {
    env.err << "ibcollect: bundle export needs snapshots: FILE.ibsnap... or --job ID\n"
               "Run 'ibcollect bundle export --help' for usage.\n";
    return core::kExitUsage;
  }
  if (!a.force && env.files.exists(a.output)) {
    env.err << "ibcollect: " << a.output
            << " already exists; choose another -o FILE.ibbundle or add --force to overwrite it\n";
    return core::kExitUsage;
  }
  return core::kExitOk;
}

int readSnapshotFiles(CliEnvironment& env, const std::vector<std::string>& files,
                      std::vector<core::BundleSnapshotInput>& inputs) {
  for (const auto& f : files) {
    auto bytes = env.files.readFile(f, core::kMaxSnapshotFileBytes);
    if (!bytes.ok()) {
      env.err << "ibcollect: cannot read " << f << ": " << bytes.error().message << "\n";
      return core::kExitCollectFailed;
    }
    inputs.push_back({std::move(*bytes), f});
  }
  return core::kExitOk;
}

// The case's snapshots, all of them or none: an incomplete case is not exported.
int fetchCaseInputs(CliEnvironment& env, const ExportArgs& a,
                    std::vector<core::BundleSnapshotInput>& inputs,
                    std::optional<v1::Case>& the_case) {
  auto config = deliveryConfig(env, a.transport, CredentialUse::Support);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  std::vector<std::string> problems;
  auto fetched = fetchCase(*config, a.case_id, a.tenant, problems);
  for (const auto& p : problems) env.err << "ibcollect: " << p << "\n";
  if (!fetched.ok()) {
    env.err << "ibcollect: fetching case " << a.case_id << ": " << fetched.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (!problems.empty() || fetched->snapshots.empty()) {
    env.err << "ibcollect: case " << a.case_id << ": " << fetched->snapshots.size() << " of "
            << fetched->info.snapshot_ids_size()
            << " snapshot(s) arrived intact; not exporting an incomplete case\n";
    return core::kExitCollectFailed;
  }
  env.err << "ibcollect: fetched case " << a.case_id << ": " << fetched->snapshots.size()
          << " snapshot(s), " << fetched->info.host_results_size() << " host result(s)\n";
  for (auto& s : fetched->snapshots) {
    inputs.push_back({std::move(s.file_bytes), "collector snapshot " + s.snapshot_id});
  }
  the_case = std::move(fetched->info);
  return core::kExitOk;
}

int fetchJobInputs(CliEnvironment& env, const ExportArgs& a,
                   std::vector<core::BundleSnapshotInput>& inputs) {
  auto config = deliveryConfig(env, a.transport, CredentialUse::Support);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  std::vector<std::string> problems;
  auto fetched = fetchJobSnapshots(*config, a.job, a.tenant, problems);
  for (const auto& p : problems) env.err << "ibcollect: " << p << "\n";
  if (!fetched.ok()) {
    env.err << "ibcollect: fetching job " << a.job << ": " << fetched.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (fetched->empty()) {
    env.err << "ibcollect: the collector has no snapshot of job " << a.job
            << (a.tenant.empty() ? "" : " of tenant " + a.tenant) << "\n";
    return core::kExitCollectFailed;
  }
  env.err << "ibcollect: fetched " << fetched->size() << " snapshot(s) of job " << a.job << "\n";
  for (auto& s : *fetched) {
    inputs.push_back({std::move(s.file_bytes), "collector snapshot " + s.snapshot_id});
  }
  return core::kExitOk;
}

// `pseudonyms` receives the pseudonym map of a redacted export; it must outlive the options.
core::BundleExportOptions exportOptions(CliEnvironment& env, const ExportArgs& a,
                                        const std::optional<v1::Case>& the_case,
                                        std::string& pseudonyms) {
  core::BundleExportOptions options;
  options.case_id = a.case_id;
  options.job_id = the_case ? the_case->job_id() : a.job;
  options.redact = a.redact;
  if (a.redact) options.pseudonym_map = &pseudonyms;
  options.ibcollect_version = IBC_VERSION;
  const auto now = env.clock.now();
  options.created_unix_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  // The case's host results travel as host/<host>.json members (docs/formats.md), covered by the
  // manifest this export signs. A redacted bundle leaves them out: they name hosts.
  if (the_case) {
    for (const auto& h : the_case->host_results()) {
      options.host_results.push_back({h.host(), h.report_json(), h.attached_at_unix_ms()});
    }
  }
  return options;
}

// Beside the bundle, never inside it: who node-001 is stays with the exporter.
int writePseudonymMap(CliEnvironment& env, const std::string& output,
                      const std::string& pseudonyms) {
  const std::string map = output + ".pseudonyms.tsv";
  if (auto st = env.writer.writeFileAtomic(map, pseudonyms, 0600); !st.ok()) {
    env.err << "ibcollect: could not write the pseudonym map " << map << ": " << st.error().message
            << "\n";
    return core::kExitCollectFailed;
  }
  env.err << "ibcollect: pseudonym map (keep it; do not send it): " << map << "\n";
  return core::kExitOk;
}

void printExported(CliEnvironment& env, const ExportArgs& a, std::size_t snapshots,
                   const core::BundleMembers& members, std::size_t archive_bytes,
                   const std::string& signer_subject) {
  auto manifest = core::parseManifest(members.at(std::string(core::kManifestMember)));
  std::size_t suspects = 0;
  if (manifest.ok()) {
    for (const auto& n : manifest->nodes()) suspects += n.suspect() ? 1 : 0;
  }
  env.out << a.output << ": " << snapshots << " snapshot(s), " << members.size() << " members, "
          << archive_bytes << " bytes, signed by " << signer_subject
          << (a.redact ? ", redacted (snapshots left out)" : "") << "\n";
  env.out << "  " << suspects << " suspect node(s) for host inspection: see pf-inspection.md "
          << "(`ibcollect bundle show " << a.output << "`)\n";
}

int runExport(CliEnvironment& env, const ExportArgs& a) {
  const bool from_case = a.files.empty() && a.job.empty() && !a.case_id.empty();
  if (int rc = checkExportArgs(env, a, from_case); rc != core::kExitOk) return rc;
  const auto signer =
      signerFromArgs(env, a.transport,
                     "bundle export signs the bundle: give --cert CERT.pem --key KEY.pem "
                     "(your support certificate) or a --config with cert and key");
  if (!signer) return core::kExitUsage;
  // Checked before anything is fetched: only a support certificate exports (docs/formats.md).
  if (auto st = core::checkExporterRole(signer->identity()); !st.ok()) {
    env.err << "ibcollect: bundle export: " << st.error().message
            << "; give --cert/--key of your support certificate\n";
    return core::kExitUsage;
  }

  std::vector<core::BundleSnapshotInput> inputs;
  if (int rc = readSnapshotFiles(env, a.files, inputs); rc != core::kExitOk) return rc;
  std::optional<v1::Case> the_case;
  if (from_case) {
    if (int rc = fetchCaseInputs(env, a, inputs, the_case); rc != core::kExitOk) return rc;
  }
  if (!a.job.empty()) {
    if (int rc = fetchJobInputs(env, a, inputs); rc != core::kExitOk) return rc;
  }
  std::string pseudonyms;
  const auto options = exportOptions(env, a, the_case, pseudonyms);
  auto members = core::buildBundle(inputs, options, *signer);
  if (!members.ok()) {
    env.err << "ibcollect: " << members.error().message << "\n";
    return core::kExitCollectFailed;
  }
  auto archive = ibc::bundle::writeBundleArchive(*members, options.created_unix_ms / 1000);
  if (!archive.ok()) {
    env.err << "ibcollect: " << archive.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (auto st = env.writer.writeFileAtomic(a.output, *archive); !st.ok()) {
    env.err << "ibcollect: could not write " << a.output << ": " << st.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (a.redact) {
    if (int rc = writePseudonymMap(env, a.output, pseudonyms); rc != core::kExitOk) return rc;
  }
  printExported(env, a, inputs.size(), *members, archive->size(), signer->identity().subject);
  return core::kExitOk;
}

int runVerifyBundle(CliEnvironment& env, const VerifyBundleArgs& a) {
  const auto verifier = verifierFromArgs(
      env, a.transport, "bundle verify needs --ca CA.pem (the CA the signers chain to)");
  if (verifier == nullptr) return core::kExitUsage;
  auto read = readVerified(env, a.bundle, *verifier);
  if (!read.ok()) {
    env.out << a.bundle << ": FAILED archive: " << read.error().message << "\n";
    return core::kExitCollectFailed;
  }
  const auto& check = read->check;
  const auto& members = read->members;
  for (const auto& p : check.problems) {
    env.out << a.bundle << ": FAILED " << core::printable(p.member, 200) << ": "
            << core::bundleProblemName(p.problem) << ": " << p.message << "\n";
  }
  if (!check.ok()) {
    env.out << a.bundle << ": " << check.problems.size()
            << " check(s) failed: do not trust this bundle; ask the exporter for a new one\n";
    printSigners(env.out, check);
    return core::kExitVerifyFailed;
  }
  env.out << a.bundle << ": OK " << members.size() << " members; manifest signed by "
          << check.manifest_signature.signer.subject << "; " << check.snapshots.size()
          << " snapshot(s) each signed by its node"
          << (check.manifest && check.manifest->redacted() ? " (redacted: snapshots left out)" : "")
          << "\n";
  printSigners(env.out, check);
  for (const auto& u : check.unchecked) env.out << "  not checked: " << u << "\n";
  // The signed snapshots judged again (docs/formats.md): findings.json must say what they say.
  const auto again = core::rejudgeBundle(members);
  if (!again.judged) {
    env.out << "  not judged again: " << again.reason << "\n";
    return core::kExitOk;
  }
  if (again.differences.empty()) {
    env.out << "  judged again: the snapshots give the same " << again.findings_compared
            << " finding(s) as findings.json\n";
    return core::kExitOk;
  }
  for (const auto& d : again.differences) env.out << "  DIFFERS: " << d << "\n";
  const std::string exported_with = check.manifest ? check.manifest->ibcollect_version() : "";
  if (exported_with != IBC_VERSION) {
    env.out << "  " << again.differences.size() << " difference(s): exported with ibcollect "
            << (exported_with.empty() ? std::string("(unknown)") : exported_with)
            << ", judged here by " << IBC_VERSION
            << ": the versions' rules differ; read the snapshots' own verdict (`ibcollect compare` "
               "of the extracted snapshots)\n";
    return core::kExitOk;
  }
  env.out << a.bundle << ": findings.json does not say what its signed snapshots say, judged by "
          << "the same ibcollect version (" << IBC_VERSION << "): do not trust its report\n";
  return core::kExitVerifyFailed;
}

// A manifest or record field for people: "-" when empty, never raw control bytes.
std::string shown(const std::string& s) {
  return s.empty() ? std::string("-") : core::printable(s, 200);
}

void printManifestHead(std::ostream& o, const std::string& bundle, const v1::BundleManifest& m) {
  o << "bundle " << bundle << " (not verified here: `ibcollect bundle verify " << bundle
    << " --ca CA.pem` checks it)\n";
  o << "  case " << shown(m.case_id()) << ", tenant " << shown(m.tenant()) << ", job "
    << shown(m.job_id()) << "\n";
  o << "  exported by " << shown(m.exporter().subject()) << " at " << utc(m.created_unix_ms())
    << " with ibcollect " << shown(m.ibcollect_version()) << "\n";
  o << "  collected " << utc(m.window_start_unix_ms()) << " to " << utc(m.window_end_unix_ms())
    << "\n";
  if (m.redacted()) {
    o << "  redacted: host names, IP addresses and user names are pseudonyms; no snapshots\n";
  }
}

void printManifestNodes(std::ostream& o, const v1::BundleManifest& m) {
  o << "\nnodes (" << m.nodes_size() << "):\n";
  std::size_t width = 4;
  for (const auto& n : m.nodes()) width = std::max(width, shown(n.node()).size());
  for (const auto& n : m.nodes()) {
    std::string name = shown(n.node());
    name.resize(width, ' ');
    std::string verdict = n.worst_severity();
    verdict.resize(8, ' ');
    o << "  " << name << "  " << verdict << "  "
      << (n.worst_code().empty() ? "-" : shown(n.worst_code()))
      << (n.suspect() ? "  (host inspection: see pf-inspection.md)" : "") << "\n";
  }
}

// What findings.json holds per node: the job's verdict the exporter judged (node, code).
// Nothing when the bundle has no findings.json or it does not parse.
void printFindingsByNode(std::ostream& o, const core::BundleMembers& members) {
  const auto f = members.find(core::kFindingsMember);
  if (f == members.end()) return;
  v1::Report report;
  google::protobuf::util::JsonParseOptions po;
  po.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(f->second, &report, po).ok()) return;
  std::map<std::string, std::map<std::string, int>> codes;  // node -> code -> count
  for (const auto& x : report.findings()) {
    if (x.severity() != "info") ++codes[x.node()][x.code()];
  }
  o << "\nfindings (" << core::kFindingsMember << ", warning and critical):\n";
  if (codes.empty()) o << "  none\n";
  for (const auto& [node, by_code] : codes) {
    o << "  " << shown(node) << ":";
    for (const auto& [code, n] : by_code) {
      o << " " << shown(code) << (n > 1 ? " x" + std::to_string(n) : std::string());
    }
    o << "\n";
  }
}

// Attachments after export, in sequence order, as their records say (unverified here); stops
// at the first missing or unreadable record.
std::vector<v1::BundleAttachment> laterAttachments(CliEnvironment& env, const std::string& bundle,
                                                   const core::BundleMembers& members) {
  std::vector<v1::BundleAttachment> later;
  for (uint32_t n = 1;; ++n) {
    const auto rec = members.find(core::attachmentRecordName(n));
    if (rec == members.end()) break;
    auto r = core::parseAttachmentRecord(rec->second);
    if (!r.ok()) {
      env.err << "ibcollect: " << bundle << ": " << rec->first << ": " << r.error().message << "\n";
      break;
    }
    later.push_back(std::move(*r));
  }
  return later;
}

std::string roleOf(const v1::BundleIdentity& id) { return roleName(id.role()); }

void printRecordedSigners(std::ostream& o, const v1::BundleManifest& m,
                          const std::vector<v1::BundleAttachment>& later) {
  o << "\nsigners (" << 1 + later.size() << "):\n";
  o << "  exporter  " << shown(m.exporter().subject()) << " (" << roleOf(m.exporter())
    << ")  signed manifest.json\n";
  for (std::size_t i = 0; i < later.size(); ++i) {
    o << "  attachment " << i + 1 << "  " << shown(later[i].attached_by().subject()) << " ("
      << roleOf(later[i].attached_by()) << ")  signed " << shown(later[i].member()) << "\n";
  }
}

void printHostResults(std::ostream& o, const std::string& bundle, const v1::BundleManifest& m,
                      const std::vector<v1::BundleAttachment>& later) {
  const int attached = m.attachments_size() + static_cast<int>(later.size());
  o << "\nhost results attached (" << attached << "):";
  if (attached == 0) {
    o << " none yet (`ibcollect host-inspect --bundle " << bundle << " --attach-to " << bundle
      << "` on the host)\n";
    return;
  }
  o << "\n";
  for (const auto& at : m.attachments()) {
    o << "  " << shown(at.member()) << "  host " << shown(at.host())
      << ", included by the exporter " << shown(at.attached_by().subject()) << " at "
      << utc(at.attached_at_unix_ms()) << "\n";
  }
  for (const auto& at : later) {
    o << "  " << shown(at.member()) << "  host " << shown(at.host()) << ", attached by "
      << shown(at.attached_by().subject()) << " (" << roleOf(at.attached_by()) << ") at "
      << utc(at.attached_at_unix_ms()) << "\n";
  }
}

int runShow(CliEnvironment& env, const ShowArgs& a) {
  auto read = readForShow(env, a.bundle);
  if (!read.ok()) {
    env.err << "ibcollect: " << read.error().message << "\n";
    return core::kExitCollectFailed;
  }
  const auto& members = read->members;
  auto it = members.find(core::kManifestMember);
  if (it == members.end()) {
    env.err << "ibcollect: " << a.bundle << ": no manifest.json: not a bundle\n";
    return core::kExitCollectFailed;
  }
  auto m = core::parseManifest(it->second);
  if (!m.ok()) {
    env.err << "ibcollect: " << a.bundle << ": " << m.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (a.format == "json") {
    env.out << it->second;
    return core::kExitOk;
  }
  auto& o = env.out;
  printManifestHead(o, a.bundle, *m);
  printManifestNodes(o, *m);
  printFindingsByNode(o, members);
  o << "\nmembers (" << read->sizes.size() << "):\n";
  for (const auto& [name, size] : read->sizes) {
    o << "  " << core::printable(name, 200) << "  " << size << " bytes\n";
  }
  const auto later = laterAttachments(env, a.bundle, members);
  printRecordedSigners(o, *m, later);
  printHostResults(o, a.bundle, *m, later);
  return core::kExitOk;
}

}  // namespace

void addBundleCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  CLI::App* bundle =
      app.add_subcommand("bundle", "Escalation bundles for the host side: export, verify, show");
  bundle->require_subcommand(1);
  bundle->footer(helpFooter(
      {"ibcollect bundle export --case case-20261125-0a1b2c3d -o case.ibbundle \\",
       "    --collector c:7443 --ca ca.pem --cert me.pem --key me.key",
       "ibcollect bundle verify case.ibbundle --ca ca.pem", "ibcollect bundle show case.ibbundle"},
      kBundleExitCodes));

  auto ea = std::make_shared<ExportArgs>();
  CLI::App* ex = bundle->add_subcommand(
      "export", "Write a signed escalation bundle: snapshots, findings, report, PF runbook");
  ex->add_option("files", ea->files, "Signed snapshots (FILE.ibsnap)")->check(CLI::ExistingFile);
  ex->add_option("-o,--output", ea->output, "The bundle to write (FILE.ibbundle)")->required();
  ex->add_option("--job", ea->job,
                 "Fetch the job's snapshots from the collector (support certificate)");
  ex->add_option("--tenant", ea->tenant,
                 "With --job or --case: the tenant (default: every tenant)");
  ex->add_option("--case", ea->case_id,
                 "Fetch the case from the collector: its snapshots and host results "
                 "(support certificate). With files or --job it only labels the bundle");
  ex->add_flag("--redact", ea->redact,
               "Replace host names, IP addresses and user names with pseudonyms (node-001, "
               "ip-001, user-001) in findings, report and PF runbook; leave the signed "
               "snapshots out");
  ex->add_flag("--force", ea->force, "Overwrite the -o file when it exists");
  addTransportOptions(ex, ea->transport, /*download=*/true);
  ex->footer(
      std::string("The bundle is signed with --cert/--key (or the config's): your\n"
                  "support certificate (OU=support); any other is refused.\nExamples:\n"
                  "  ibcollect bundle export a.ibsnap b.ibsnap -o case.ibbundle \\\n"
                  "      --cert me.pem --key me.key\n"
                  "  ibcollect bundle export --job 1234 --collector c:7443 --ca ca.pem \\\n"
                  "      --cert me.pem --key me.key -o job1234.ibbundle --redact\n"
                  "  ibcollect bundle export --case case-20261125-0a1b2c3d --collector "
                  "c:7443 \\\n      --ca ca.pem --cert me.pem --key me.key -o case.ibbundle\n\n") +
      kBundleExitCodes);

  auto va = std::make_shared<VerifyBundleArgs>();
  CLI::App* ve = bundle->add_subcommand(
      "verify", "Check a bundle offline: hashes, signatures, signer roles, manifest claims");
  ve->add_option("bundle", va->bundle, "The bundle (FILE.ibbundle)")
      ->required()
      ->check(CLI::ExistingFile);
  ve->add_option("--ca", va->transport.flags.ca, "CA certificate (PEM) the signers chain to");
  ve->add_option("--config", va->transport.config, "Agent config (for its ca = ... key)");
  ve->footer(helpFooter({"ibcollect bundle verify case.ibbundle --ca ca.pem"}, kBundleExitCodes));

  auto sa = std::make_shared<ShowArgs>();
  CLI::App* sh = bundle->add_subcommand(
      "show", "What a bundle holds: case, nodes and verdicts, members, signers, host results");
  sh->add_option("bundle", sa->bundle, "The bundle (FILE.ibbundle)")
      ->required()
      ->check(CLI::ExistingFile);
  sh->add_option("--format", sa->format, "text (for people) or json (the manifest)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sh->footer(helpFooter({"ibcollect bundle show case.ibbundle",
                         "ibcollect bundle show case.ibbundle --format json   (the manifest)"},
                        kBundleExitCodes));

  commands.push_back({[ex] { return ex->parsed(); }, [&env, ea] { return runExport(env, *ea); }});
  commands.push_back(
      {[ve] { return ve->parsed(); }, [&env, va] { return runVerifyBundle(env, *va); }});
  commands.push_back({[sh] { return sh->parsed(); }, [&env, sa] { return runShow(env, *sa); }});
}

}  // namespace ibc::agent::cli
