// `ibcollect host-inspect`: the host side of an escalation (docs/formats.md).

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "ibc/agent/cli_transport.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/findings.h"
#include "ibc/core/pf_report.h"
#include "ibc/core/text.h"
#include "ibc/support/host_inspect.h"

namespace ibc::agent::cli {

namespace v1 = ::ibcollect::v1;

namespace {

constexpr std::size_t kMaxPasteBytes = 16u << 20;

struct HostArgs {
  std::string bundle;
  std::vector<std::string> vfs;
  std::string root = "/";
  std::vector<std::string> pastes;
  std::string attach_to;
  TransportArgs transport;  // --ca of --bundle and --attach-to, --cert/--key of --attach-to
  ReportOptions report;
};

// The suspect VFs of a bundle (pf-inspection.json), as queries.
core::Result<std::vector<VfQuery>> bundleQueries(const core::BundleMembers& members,
                                                 const std::string& path) {
  const auto it = members.find(core::kPfInspectionJsonMember);
  if (it == members.end()) {
    return core::Error{core::ErrorCode::Malformed,
                       path + ": no " + std::string(core::kPfInspectionJsonMember) + " member"};
  }
  v1::PfInspection pfi;
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(it->second, &pfi, opts).ok()) {
    return core::Error{
        core::ErrorCode::Malformed,
        path + ": " + std::string(core::kPfInspectionJsonMember) + " does not parse"};
  }
  std::vector<VfQuery> out;
  for (const auto& s : pfi.suspects()) {
    VfQuery q;
    q.node = s.node();
    q.device = s.device();
    q.node_guid = normalizeGuid(s.node_guid());
    q.port_guid = normalizeGuid(s.port_guid());
    q.mac = normalizeMac(s.mac());
    // The guest's PCI address is the VM's, not the host's: compared last, and only as
    // a hint (a VM given a host address through passthrough names it the same).
    q.pci = normalizePci(s.pci_address());
    out.push_back(std::move(q));
  }
  return out;
}

// Prints why a bundle did not verify, one line per failing member (as `bundle verify`).
void printProblems(CliEnvironment& env, const std::string& path, const core::BundleCheck& check) {
  for (const auto& p : check.problems) {
    env.err << "ibcollect: " << path << ": FAILED " << core::printable(p.member, 200) << ": "
            << core::bundleProblemName(p.problem) << ": " << p.message << "\n";
  }
}

// `path` read and verified while it inflates (bounded: ibc::bundle::readVerifiedBundle):
// its members once it verifies. A bundle that does not verify prints every failing member and
// `refusal`, and is a PermissionDenied error (exit 5); an unreadable one any other error.
core::Result<core::BundleMembers> readVerifiedMembers(CliEnvironment& env, const std::string& path,
                                                      const core::SignatureVerifier& verifier,
                                                      std::string_view refusal) {
  auto bytes = env.files.readFile(path, ibc::bundle::kMaxBundleFileBytes);
  if (!bytes.ok()) return core::Error{bytes.error().code, path + ": " + bytes.error().message};
  auto read = ibc::bundle::readVerifiedBundle(*bytes, verifier, env.clock.now());
  if (!read.ok()) return core::Error{read.error().code, path + ": " + read.error().message};
  if (read->check.ok()) return std::move(read->members);
  printProblems(env, path, read->check);
  return core::Error{core::ErrorCode::PermissionDenied,
                     path + ": " + std::to_string(read->check.problems.size()) +
                         " check(s) failed: " + std::string(refusal)};
}

// The exit code of a bundle that could not be read or did not verify, after saying why.
int bundleRefused(CliEnvironment& env, const core::Error& e) {
  env.err << "ibcollect: " << e.message << "\n";
  return e.code == core::ErrorCode::PermissionDenied ? core::kExitVerifyFailed
                                                     : core::kExitCollectFailed;
}

int attach(CliEnvironment& env, const HostArgs& a, const core::SnapshotSigner& signer,
           const core::SignatureVerifier& verifier, const v1::HostInspection& in,
           const std::string& json) {
  auto members = readVerifiedMembers(env, a.attach_to, verifier,
                                     "nothing attached to a bundle that does not verify");
  if (!members.ok()) return bundleRefused(env, members.error());
  core::BundleCheck verified;
  auto name = core::attachHostResult(*members, {in.host(), json, in.inspected_at_unix_ms()}, signer,
                                     verifier, env.clock.now(), &verified);
  if (!name.ok()) {
    if (!verified.ok()) {
      printProblems(env, a.attach_to, verified);
      env.err << "ibcollect: " << a.attach_to << ": " << verified.problems.size()
              << " check(s) failed: nothing attached to a bundle that does not verify\n";
      return core::kExitVerifyFailed;
    }
    env.err << "ibcollect: " << a.attach_to << ": " << name.error().message << "\n";
    return core::kExitCollectFailed;
  }
  auto archive = ibc::bundle::writeBundleArchive(*members, in.inspected_at_unix_ms() / 1000);
  if (!archive.ok()) {
    env.err << "ibcollect: " << archive.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (auto st = env.writer.writeFileAtomic(a.attach_to, *archive); !st.ok()) {
    env.err << "ibcollect: could not write " << a.attach_to << ": " << st.error().message << "\n";
    return core::kExitCollectFailed;
  }
  env.err << "ibcollect: attached " << *name << " to " << a.attach_to << ", signed by "
          << signer.identity().subject << " (" << core::certificateRoleName(signer.identity().role)
          << "); the exporter's signature and earlier attachments are unchanged\n";
  return core::kExitOk;
}

// The --paste files into `o`; how many could not be read (each named on stderr).
int readPastes(CliEnvironment& env, const std::vector<std::string>& paths, HostInspectOptions& o) {
  int failed = 0;
  for (const auto& p : paths) {
    auto text = env.files.readFile(p, kMaxPasteBytes);
    if (!text.ok()) {
      env.err << "ibcollect: cannot read " << p << ": " << text.error().message << "\n";
      ++failed;
      continue;
    }
    o.pastes.push_back({p, std::move(*text)});
  }
  return failed;
}

int runHostInspect(CliEnvironment& env, const HostArgs& a) {
  // Only pastes: a support engineer holding a provider's output judges it anywhere.
  const bool pastes_only = a.bundle.empty() && a.vfs.empty() && !a.pastes.empty();
  if (!pastes_only && a.bundle.empty() == a.vfs.empty()) {
    env.err << "ibcollect: host-inspect needs the VFs to look for: --bundle BUNDLE or --vf "
               "GUID|MAC|PCI (one of them), or only --paste FILE to judge a PF tool's output "
               "on its own\nRun 'ibcollect host-inspect --help' for usage.\n";
    return core::kExitUsage;
  }
  HostInspectOptions o;
  o.root = a.root;
  o.version = IBC_VERSION;
  for (const auto& v : a.vfs) {
    auto q = parseVfArgument(v);
    if (!q.ok()) {
      env.err << "ibcollect: " << q.error().message << "\n";
      return core::kExitUsage;
    }
    o.vfs.push_back(std::move(*q));
  }
  // Who signs --attach-to and the CA that every bundle is checked against come first: a
  // certificate that may not attach is refused before anything is inspected.
  std::optional<core::SnapshotSigner> signer;
  if (!a.attach_to.empty()) {
    signer = signerFromArgs(env, a.transport,
                            "--attach-to signs the host result it adds: give --cert CERT.pem "
                            "--key KEY.pem (your provider or support certificate) or a --config "
                            "with cert and key");
    if (!signer) return core::kExitUsage;
    if (auto st = core::checkAttacherRole(signer->identity()); !st.ok()) {
      env.err << "ibcollect: --attach-to: " << st.error().message
              << "; give --cert/--key of your provider or support certificate\n";
      return core::kExitUsage;
    }
  }
  std::unique_ptr<core::SignatureVerifier> verifier;
  if (!a.bundle.empty() || !a.attach_to.empty()) {
    verifier = verifierFromArgs(env, a.transport,
                                "host-inspect verifies the bundle first: give --ca CA.pem (the "
                                "CA the bundle's signers chain to) or a --config with ca");
    if (verifier == nullptr) return core::kExitUsage;
  }
  if (!a.bundle.empty()) {
    auto members = readVerifiedMembers(env, a.bundle, *verifier,
                                       "not inspecting for a bundle that does not verify; ask "
                                       "the exporter for a new one");
    if (!members.ok()) return bundleRefused(env, members.error());
    auto queries = bundleQueries(*members, a.bundle);
    if (!queries.ok()) {
      env.err << "ibcollect: " << queries.error().message << "\n";
      return core::kExitCollectFailed;
    }
    if (queries->empty()) {
      env.err << "ibcollect: " << a.bundle
              << ": the bundle names no suspect VF (pf-inspection.json is empty): nothing to "
                 "inspect; give --vf to look for one\n";
      return core::kExitUsage;
    }
    o.vfs = std::move(*queries);
  }
  int failed = readPastes(env, a.pastes, o);
  HostInspectOutcome outcome;
  if (pastes_only) {
    outcome = inspectPastes(o, env.clock);
  } else {
    auto fs = env.open_root(a.root);
    outcome = inspectHost(o, seamsFor(env, *fs));
  }
  for (const auto& p : outcome.unrecognised_pastes) {
    env.err << "ibcollect: " << p
            << ": nothing recognised (mlxlink, mlxconfig q, flint q, ethtool -m, lspci, ip "
               "link show with vf lines, aer_dev_* counters or a kernel log expected)\n";
    ++failed;
  }
  const auto& in = outcome.inspection;
  const std::string json = core::renderHostInspectionJson(in);
  if (a.report.format == "json") {
    env.out << json;
  } else {
    const core::TextOptions t = textOptionsFor(env, a.report);
    env.out << core::renderHostInspectionText(in, t);
  }
  std::vector<v1::Finding> all(in.findings().begin(), in.findings().end());
  const int verdict = core::exitCodeFor(all);
  bool attach_failed = false;
  if (!a.attach_to.empty()) {
    const int rc = attach(env, a, *signer, *verifier, in, json);
    // A bundle that does not verify is a security matter: it wins over the verdict.
    if (rc == core::kExitVerifyFailed) return rc;
    attach_failed = rc != core::kExitOk;
  }
  return verdictBeforeDelivery(verdict, failed > 0 || attach_failed);
}

}  // namespace

void addHostCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  auto args = std::make_shared<HostArgs>();
  HostArgs& a = *args;
  CLI::App* cmd = app.add_subcommand(
      "host-inspect",
      "On the physical host: find the PF and VF index hosting each suspect VF, collect and "
      "judge the PF side (PF_* findings)");
  cmd->add_option("--bundle", a.bundle,
                  "Escalation bundle (.ibbundle): inspect every suspect VF it names")
      ->check(CLI::ExistingFile);
  cmd->add_option("--vf", a.vfs,
                  "A VF to look for by node or port GUID, MAC or host PCI address (repeatable)");
  cmd->add_option("--root", a.root,
                  "Read the host from a copied tree (DIR/sys/...) instead of /; nothing is run")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  cmd->add_option("--paste", a.pastes,
                  "Output of mlxlink [-m -c -e], mlxconfig q, flint q, ethtool -m, ip link show "
                  "(vf lines), aer_dev_* counters or the host kernel log (recognised from "
                  "content; repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--attach-to", a.attach_to,
                  "Verify this bundle, then add the result as host/<host>.json with a signed "
                  "attachment record (--cert/--key: a provider or support certificate); the "
                  "exporter's signature stays as it is")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ca", a.transport.flags.ca,
                  "CA certificate (PEM) the bundle's signers chain to: --bundle and --attach-to "
                  "are verified against it first (default: the config's ca)");
  cmd->add_option("--cert", a.transport.flags.cert,
                  "Certificate (PEM) that signs --attach-to (OU=provider or OU=support)");
  cmd->add_option("--key", a.transport.flags.key, "Private key (PEM) of --cert");
  cmd->add_option("--config", a.transport.config,
                  "Agent config with ca, cert and key (default /etc/ibcollect/agent.conf)");
  addReportOptions(cmd, a.report);
  // Rate and busbw expectations judge the VF side; the PF side has its own evidence.
  cmd->remove_option(cmd->get_option("--expect-rate"));
  cmd->remove_option(cmd->get_option("--expect-busbw"));
  cmd->footer(std::string("A bundle is verified first (--ca or the config's ca); one that\n"
                          "does not verify is refused with exit code 5 and the reasons.\n"
                          "Examples:\n"
                          "  ibcollect host-inspect --bundle case42.ibbundle --ca ca.pem\n"
                          "  ibcollect host-inspect --vf 0x248a070300a1b2c3 --paste mlxlink.txt\n"
                          "  ibcollect host-inspect --paste mlxlink.txt   (a paste on its own)\n"
                          "  ibcollect host-inspect --vf 0000:42:00.2 --root /tmp/host-tree\n"
                          "  ibcollect host-inspect --bundle c.ibbundle --attach-to c.ibbundle \\\n"
                          "      --ca ca.pem --cert me.pem --key me.key\n\n") +
              kExitCodes + "\n5 a bundle (--bundle, --attach-to) did not verify.");
  commands.push_back(
      {[cmd] { return cmd->parsed(); }, [&env, args] { return runHostInspect(env, *args); }});
}

}  // namespace ibc::agent::cli
