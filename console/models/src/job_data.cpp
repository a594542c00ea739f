#include "ibc/console/job_data.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/encoding.h"
#include "ibc/core/findings.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::Result;

namespace {

// Reads at most `max` bytes (the snapshot file bound by default) of a regular file, through
// the seams of ibc_os: a hostile or wrong file cannot exhaust memory, and a FIFO, device or
// directory named `.ibsnap` is refused at once instead of blocking the loader (judged by its
// status before any read; the read itself is non-blocking).
Result<std::string> readBounded(const std::string& path,
                                std::uint64_t max = core::kMaxSnapshotFileBytes) {
  const os::RootedFilesystem files("");
  auto status = files.status(path);
  if (!status.ok()) return status.error();
  if (!status->regular) {
    return Error{core::ErrorCode::Unsupported, path + ": not a regular file (" +
                                                   (status->fifo        ? "a FIFO"
                                                    : status->directory ? "a directory"
                                                                        : "a device or socket") +
                                                   "), not a snapshot or bundle"};
  }
  if (status->bytes > max) {
    return Error{core::ErrorCode::TooLarge,
                 path + ": larger than " + std::to_string(max >> 20) + " MiB, not a " +
                     (max == core::kMaxSnapshotFileBytes ? "snapshot file" : "bundle")};
  }
  bool more = false;
  auto bytes = files.readFile(path, static_cast<std::size_t>(max), &more);
  if (!bytes.ok()) return bytes.error();
  if (more || bytes->size() != status->bytes) {
    return Error{core::ErrorCode::Io, path + ": changed while read"};
  }
  return bytes;
}

struct Opened {
  v1::Snapshot snapshot;
  std::string trust;
  std::uint64_t bytes = 0;  // the signed file's size
  SignerInfo signer;
  std::string digest;  // the SHA-256 (hex) of the file's bytes
};

Result<Opened> readSnapshot(const std::string& path, const core::SignatureVerifier* verifier) {
  auto bytes = readBounded(path);
  if (!bytes.ok()) return bytes.error();
  auto env = core::decodeSnapshotFile(*bytes);
  if (!env.ok()) return Error{env.error().code, path + ": " + env.error().message};
  auto trust = checkSnapshotSignature(*env, verifier);
  if (trust.refused) return Error{core::ErrorCode::PermissionDenied, path + ": " + trust.words};
  auto snap = core::openSnapshot(*env);
  if (!snap.ok()) return Error{snap.error().code, path + ": " + snap.error().message};
  // Judged on its parsed results only: the raw text is read again when a page shows it.
  dropRawText(*snap);
  SignerInfo signer = describeSigner(*env, *snap, verifier != nullptr);
  std::string words = withSigner(std::move(trust.words), signer);
  return Opened{std::move(*snap), std::move(words), bytes->size(), std::move(signer),
                core::sha256Hex(*bytes)};
}

bool isBundlePath(const std::string& path) {
  static constexpr std::string_view kSuffix = ".ibbundle";
  return path.size() >= kSuffix.size() &&
         path.compare(path.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

// The snapshots of a bundle, offline: read in bounded memory (ibc_bundle), verified as
// `ibcollect bundle verify` does (every hash, the manifest and snapshot signatures, the
// signers' roles) against the configured CA. A bundle that does not verify, or cannot be
// verified for want of a CA, shows nothing; the reason goes to `errors`.
struct BundleSnapshots {
  std::vector<std::string> members;  // snapshots/<node>.ibsnap
  std::vector<Opened> opened;
  std::vector<std::string> signed_bytes;
};
Result<BundleSnapshots> readBundle(const std::string& path,
                                   const core::SignatureVerifier* verifier) {
  if (verifier == nullptr) {
    return Error{core::ErrorCode::PermissionDenied,
                 path +
                     ": a bundle is shown only once it verifies; open it with --ca CA.pem "
                     "(the CA that issued its signers' certificates)"};
  }
  auto bytes = readBounded(path, bundle::kMaxBundleFileBytes);
  if (!bytes.ok()) return bytes.error();
  auto read = bundle::readVerifiedBundle(*bytes, *verifier, std::chrono::system_clock::now());
  if (!read.ok()) return Error{read.error().code, path + ": " + read.error().message};
  const auto& check = read->check;
  if (!check.ok()) {
    std::string why;
    for (const auto& p : check.problems) {
      if (!why.empty()) why += "; ";
      why += p.member + ": " + p.message;
    }
    return Error{core::ErrorCode::PermissionDenied, path + ": the bundle does not verify: " + why};
  }
  // Every signer with its role: the exporter, then each host result's attacher.
  std::string signers;
  for (const auto& sc : check.signers) {
    if (!signers.empty()) signers += "; ";
    signers += (sc.exporter ? "exported by " : "host result " + sc.covers + " attached by ") +
               sc.signature.signer.subject + " (" +
               std::string(core::certificateRoleName(sc.signature.signer.role)) + ")";
  }
  if (signers.empty()) signers = "no signer named";
  BundleSnapshots out;
  for (auto& [name, data] : read->members) {
    if (core::bundleMemberKind(name) != "snapshot") continue;
    auto env = core::decodeSnapshotFile(data);
    if (!env.ok()) return Error{env.error().code, path + ":" + name + ": " + env.error().message};
    auto trust = checkSnapshotSignature(*env, verifier);
    if (trust.refused)
      return Error{core::ErrorCode::PermissionDenied, path + ":" + name + ": " + trust.words};
    auto snap = core::openSnapshot(*env);
    if (!snap.ok())
      return Error{snap.error().code, path + ":" + name + ": " + snap.error().message};
    out.members.push_back(name);
    SignerInfo signer = describeSigner(*env, *snap, true);
    std::string words = withSigner(trust.words, signer) + "; in bundle " + path +
                        ", which verified (" + signers + ")";
    out.opened.push_back({std::move(*snap), std::move(words), 0, std::move(signer), {}});
    out.signed_bytes.push_back(std::move(data));
  }
  if (out.members.empty()) {
    return Error{core::ErrorCode::InvalidArgument,
                 path +
                     ": the bundle verified but holds no signed snapshot (a redacted bundle "
                     "leaves them out): open its report.md and findings.json instead"};
  }
  return out;
}

}  // namespace

std::string withSigner(std::string words, const SignerInfo& signer) {
  if (signer.is_signed && !signer.is_node)
    words += "; NOT the node's own certificate (" + signer.problem +
             "): the collector refuses such a snapshot";
  return words;
}

SignerInfo describeSigner(const v1::SignedSnapshot& envelope, const v1::Snapshot& snapshot,
                          bool checked) {
  SignerInfo out;
  if (envelope.certificate_chain_size() == 0) return out;
  out.is_signed = true;
  out.checked = checked;
  auto id = core::certificateIdentity(envelope.certificate_chain(0));
  if (!id.ok()) {
    out.problem = "its certificate cannot be read: " + id.error().message;
    return out;
  }
  out.name = id->name;
  out.tenant = id->tenant;
  if (id->role != core::CertificateRole::Agent) {
    out.problem = "signed by " + id->subject + ", which is not an agent certificate";
  } else if (auto st = core::checkSignerNode(core::snapshotNodeName(snapshot.node()), *id);
             !st.ok()) {
    out.problem = st.error().message;
  } else {
    out.is_node = true;
  }
  return out;
}

SignatureTrust checkSnapshotSignature(const v1::SignedSnapshot& env,
                                      const core::SignatureVerifier* verifier) {
  if (env.signature().empty() && env.certificate_chain_size() == 0) {
    return {false, "UNSIGNED: nobody vouches for these bytes"};
  }
  const std::string tampered =
      "REFUSED, the snapshot was changed after it was signed or is not the signer's: ";
  if (verifier != nullptr) {
    const auto check = verifier->verify(env, std::chrono::system_clock::now());
    if (!check.ok()) {
      if (check.problem == core::SignatureProblem::BadSignature)
        return {true, tampered + check.message};
      return {true, "REFUSED, its signature does not hold (" +
                        std::string(core::signatureProblemName(check.problem)) +
                        "): " + check.message};
    }
    return {false, "signed by " + check.signer.subject + ", checked against the CA"};
  }
  const auto intact = core::checkSignatureIntegrity(env);
  if (!intact.ok()) return {true, tampered + intact.message};
  return {false, "signed by " + intact.signer.subject +
                     "; bytes intact, signer NOT checked against a CA (give --ca)"};
}

namespace {

// The scan nodeOfFinding's answer is defined by: the first node with the finding's source
// (when both have one), else the first with its node name.
int scanNodeOfFinding(const JobData& job, int finding) {
  const auto& f = job.report.findings(finding);
  const auto& nodes = job.report.nodes();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (!f.source().empty() && !n.source().empty() ? f.source() == n.source()
                                                   : f.node() == n.node())
      return i;
  }
  return -1;
}

}  // namespace

int nodeOfFinding(const JobData& job, int finding) {
  if (finding < 0 || finding >= job.report.findings_size()) return -1;
  if (job.finding_node.size() == static_cast<std::size_t>(job.report.findings_size()))
    return job.finding_node[static_cast<std::size_t>(finding)];
  return scanNodeOfFinding(job, finding);
}

std::vector<int> findingsOfNode(const JobData& job, int node) {
  if (node < 0 || node >= job.report.nodes_size()) return {};
  if (job.node_findings.size() == static_cast<std::size_t>(job.report.nodes_size()) &&
      job.finding_node.size() == static_cast<std::size_t>(job.report.findings_size()))
    return job.node_findings[static_cast<std::size_t>(node)];
  std::vector<int> out;
  for (int i = 0; i < job.report.findings_size(); ++i) {
    if (nodeOfFinding(job, i) == node) out.push_back(i);
  }
  return out;
}

void KeptSnapshots::push_back(const v1::Snapshot& kept) {
  const std::string bytes = core::serializeSnapshot(kept);
  // Level 1: as small as the default's within a few bytes, at a fraction of the time.
  packed_.push_back(qCompress(reinterpret_cast<const uchar*>(bytes.data()),
                              static_cast<qsizetype>(bytes.size()), 1));
}

std::string KeptSnapshots::bytes(std::size_t i) const {
  const QByteArray raw = qUncompress(packed_[i]);
  return std::string(raw.constData(), static_cast<std::size_t>(raw.size()));
}

v1::Snapshot KeptSnapshots::operator[](std::size_t i) const {
  const QByteArray raw = qUncompress(packed_[i]);
  v1::Snapshot s;
  s.ParseFromArray(raw.constData(), static_cast<int>(raw.size()));  // its own serialization
  return s;
}

void indexFindings(JobData& job) {
  const auto& nodes = job.report.nodes();
  // The same rule as the scan, through maps: first node per source, first per name, and
  // whether any node lacks a source (then a name match may decide).
  std::unordered_map<std::string, int> by_source, by_name;
  std::unordered_map<std::string, int> by_name_without_source;
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (!n.source().empty()) by_source.emplace(n.source(), i);
    by_name.emplace(n.node(), i);
    if (n.source().empty()) by_name_without_source.emplace(n.node(), i);
  }
  job.finding_node.assign(static_cast<std::size_t>(job.report.findings_size()), -1);
  job.node_findings.assign(static_cast<std::size_t>(nodes.size()), {});
  for (int k = 0; k < job.report.findings_size(); ++k) {
    const auto& f = job.report.findings(k);
    int node = -1;
    if (f.source().empty()) {
      if (auto it = by_name.find(f.node()); it != by_name.end()) node = it->second;
    } else {
      // Nodes with a source match by source; nodes without one by name: the first in order.
      int a = -1, b = -1;
      if (auto it = by_source.find(f.source()); it != by_source.end()) a = it->second;
      if (auto it = by_name_without_source.find(f.node()); it != by_name_without_source.end())
        b = it->second;
      node = a < 0 ? b : (b < 0 ? a : std::min(a, b));
    }
    job.finding_node[static_cast<std::size_t>(k)] = node;
    if (node >= 0) job.node_findings[static_cast<std::size_t>(node)].push_back(k);
  }
}

std::vector<std::optional<double>> busbwPeaks(const JobData& job) {
  std::vector<std::optional<double>> out;
  for (int i = 0; i < job.report.nodes_size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    out.push_back(k < job.counters.size() ? job.counters[k].peak_busbw_gbs : std::nullopt);
  }
  return out;
}

void dropRawText(v1::Snapshot& snapshot) {
  // set_allocated_raw(nullptr) frees the text; clear_raw() would keep its capacity.
  for (auto& log : *snapshot.mutable_nccl_logs()) log.set_allocated_raw(nullptr);
  for (auto& t : *snapshot.mutable_nccl_tests()) t.set_allocated_raw(nullptr);
  for (auto& t : *snapshot.mutable_tool_outputs()) t.set_allocated_raw(nullptr);
}

void keptForm(v1::Snapshot& snapshot) {
  dropRawText(snapshot);
  core::slimSnapshot(snapshot);
  // What no page reads of a judged node but from its whole snapshot (node page, diff, bundle
  // plan): NCCL logs' and nccl-tests' parsed results (their peak busbw is kept with the
  // counters), the kernel log and pasted tool outputs. RepeatedPtrField's Clear() would keep
  // its elements: swapped out, they are freed.
  auto release = [](auto* field) {
    std::remove_reference_t<decltype(*field)> gone;
    field->Swap(&gone);
  };
  release(snapshot.mutable_nccl_logs());
  release(snapshot.mutable_nccl_tests());
  release(snapshot.mutable_tool_outputs());
  snapshot.clear_kernel_log();
}

Result<SnapshotRef> snapshotRef(const JobData& job, int node) {
  if (node < 0 || node >= job.report.nodes_size() || node >= static_cast<int>(job.snapshots.size()))
    return Error{core::ErrorCode::InvalidArgument, "no node " + std::to_string(node)};
  const auto i = static_cast<std::size_t>(node);
  SnapshotRef ref;
  const std::string& file = job.report.nodes(node).snapshot_file();
  ref.where = file.empty() ? job.report.nodes(node).label() : file;
  if (i < job.signed_files.size() && !job.signed_files[i].empty()) {
    ref.signed_bytes = job.signed_files[i];
  } else if (i < job.kept_bytes.size() && !job.kept_bytes[i].empty()) {
    ref.kept_bytes = job.kept_bytes[i];
  } else if (file.empty()) {
    return Error{core::ErrorCode::NotFound,
                 job.report.nodes(node).label() + ": it came from no file to read again"};
  } else {
    ref.file = file;
    if (i < job.file_digests.size()) ref.digest = job.file_digests[i];
  }
  return ref;
}

Result<v1::Snapshot> readFullSnapshot(const SnapshotRef& ref) {
  Result<v1::Snapshot> full = Error{core::ErrorCode::NotFound, ""};
  if (!ref.signed_bytes.empty()) {
    auto envelope = core::decodeSnapshotFile(ref.signed_bytes);
    full = envelope.ok() ? core::openSnapshot(*envelope) : Result<v1::Snapshot>(envelope.error());
  } else if (!ref.kept_bytes.empty()) {
    v1::Snapshot parsed;
    if (!parsed.ParseFromString(ref.kept_bytes))
      return Error{core::ErrorCode::Malformed, ref.where + ": its kept copy does not parse"};
    full = std::move(parsed);
  } else {
    auto bytes = readBounded(ref.file);
    if (!bytes.ok()) return bytes.error();
    if (!ref.digest.empty() && core::sha256Hex(*bytes) != ref.digest) {
      return Error{core::ErrorCode::Malformed,
                   ref.where + " changed since it was opened: open it again (File > Reload)"};
    }
    auto envelope = core::decodeSnapshotFile(*bytes);
    full = envelope.ok() ? core::openSnapshot(*envelope) : Result<v1::Snapshot>(envelope.error());
  }
  if (!full.ok()) return Error{full.error().code, ref.where + ": " + full.error().message};
  return full;
}

Result<v1::Snapshot> readFullSnapshot(const JobData& job, int node) {
  auto ref = snapshotRef(job, node);
  if (!ref.ok()) return ref.error();
  return readFullSnapshot(*ref);
}

NodeSelection firstLook(const JobData& job) {
  int best = -1;
  auto key = [&job](int k) {
    const auto& f = job.report.findings(k);
    return std::make_tuple(-severityRank(f.severity()), core::findingSpecificity(f.code()),
                           f.code(), k);
  };
  for (int k = 0; k < job.report.findings_size(); ++k) {
    if (nodeOfFinding(job, k) < 0) continue;
    if (best < 0 || key(k) < key(best)) best = k;
  }
  if (best >= 0) {
    const auto& f = job.report.findings(best);
    return {nodeOfFinding(job, best), f.device(), static_cast<int>(f.port())};
  }
  NodeSelection out;
  int worst_rank = -1;
  for (int i = 0; i < job.report.nodes_size(); ++i) {
    const int r = severityRank(job.report.nodes(i).worst_severity());
    if (r > worst_rank) {
      worst_rank = r;
      out.node = i;
    }
  }
  return out;
}

int severityRank(const std::string& severity) {
  if (severity == "critical") return 3;
  if (severity == "warning") return 2;
  if (severity == "info") return 1;
  return 0;
}

int worstPort(const v1::NodeReport& node) {
  int worst = -1;
  int worst_rank = -1;
  for (int p = 0; p < node.ports_size(); ++p) {
    const int r = severityRank(node.ports(p).worst_severity());
    if (r > worst_rank) {
      worst_rank = r;
      worst = p;
    }
  }
  return worst;
}

JobAssembler::JobAssembler(core::JobVerdictOptions options) : judgement_(std::move(options)) {}

void JobAssembler::add(v1::Snapshot snapshot, SnapshotSource source) {
  job_.counters.push_back(nodeCountersOf(snapshot, job_.counter_names));
  job_.hostnames.push_back(snapshot.node().hostname());
  // Read again from its file or signed bytes when a page shows it whole; else kept serialized.
  job_.kept_bytes.push_back(!source.in_file && source.signed_bytes.empty()
                                ? core::serializeSnapshot(snapshot)
                                : std::string());
  job_.file_digests.push_back(std::move(source.file_digest));
  described_ = described_ || source.described;
  job_.trust.push_back(std::move(source.trust));
  job_.signers.push_back(std::move(source.signer));
  job_.signed_files.push_back(std::move(source.signed_bytes));
  job_.signed_sizes.push_back(source.size);
  job_.snapshot_ids.push_back(std::move(source.id));
  core::AnalyzedNode n;
  n.snapshot = std::move(snapshot);
  dropRawText(n.snapshot);  // judged on the parsed results (core never reads the raw text)
  n.include_snapshot = true;
  n.snapshot_file = std::move(source.file);
  judgement_.add(std::move(n), core::Keep::Verdict);
}

JobData JobAssembler::finish() {
  JobData out = std::move(job_);
  job_ = JobData{};
  out.report = core::buildReport(judgement_.finish());
  // Every node's kept form is packed before any parsed snapshot is freed: the parsed ones then
  // go as one block the system can take back, not as holes between what the job keeps.
  std::vector<v1::Snapshot> parsed(static_cast<std::size_t>(out.report.nodes_size()));
  for (int i = 0; i < out.report.nodes_size(); ++i) {
    auto* node = out.report.mutable_nodes(i);
    auto& kept = parsed[static_cast<std::size_t>(i)];
    kept.Swap(node->mutable_snapshot());
    node->clear_snapshot();
    keptForm(kept);  // slim already (Keep::Verdict): what is left of its NCCL logs goes too
    out.snapshots.push_back(kept);
  }
  parsed.clear();
  // What no loader gave is left empty, as the fields say.
  auto none = [](const auto& v) {
    return std::all_of(v.begin(), v.end(),
                       [](const auto& x) { return x == std::decay_t<decltype(x)>{}; });
  };
  if (!described_) {
    out.trust.clear();
    out.signers.clear();
  }
  if (none(out.signed_files)) out.signed_files.clear();
  if (none(out.signed_sizes)) out.signed_sizes.clear();
  if (none(out.snapshot_ids)) out.snapshot_ids.clear();
  if (none(out.kept_bytes)) out.kept_bytes.clear();
  if (none(out.file_digests)) out.file_digests.clear();
  indexFindings(out);
  return out;
}

JobData diagnoseSnapshots(std::vector<v1::Snapshot> snapshots,
                          const std::vector<std::string>& files,
                          const core::JobVerdictOptions& options) {
  JobAssembler job(options);
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    SnapshotSource source;
    if (i < files.size()) source.file = files[i];
    job.add(std::move(snapshots[i]), std::move(source));
  }
  return job.finish();
}

namespace {

// The opened snapshots by tenant (the signer's) and job, each group assembled apart: files of
// several jobs or tenants are never one job.
class OpenedGroups {
 public:
  explicit OpenedGroups(const core::JobVerdictOptions& options) : options_(options) {}

  void add(v1::Snapshot snapshot, SnapshotSource source, const std::string& opened_as) {
    const std::string& tenant = source.signer.tenant;
    const std::string& job_id = snapshot.node().job_id();
    std::size_t g = 0;
    while (g < groups_.size() && (groups_[g].tenant != tenant || groups_[g].job_id != job_id)) ++g;
    if (g == groups_.size()) {
      groups_.push_back({tenant, job_id, {}, false});
      jobs_.emplace_back(options_);
    }
    auto& list = groups_[g].files;
    if (list.empty() || list.back() != opened_as) list.push_back(opened_as);
    jobs_[g].add(std::move(snapshot), std::move(source));
  }

  // The largest group (the first of equal ones) judged; the others are listed for the jobs
  // page to open.
  JobData finish() {
    std::size_t shown = 0;
    for (std::size_t g = 1; g < jobs_.size(); ++g) {
      if (jobs_[g].size() > jobs_[shown].size()) shown = g;
    }
    JobData out = jobs_.empty() ? JobAssembler(options_).finish() : jobs_[shown].finish();
    jobs_.clear();
    if (!groups_.empty()) groups_[shown].shown = true;
    out.groups = std::move(groups_);
    return out;
  }

 private:
  core::JobVerdictOptions options_;
  std::vector<OpenedGroup> groups_;
  std::vector<JobAssembler> jobs_;  // one per group
};

}  // namespace

JobData loadSnapshotFiles(const std::vector<std::string>& paths,
                          const core::JobVerdictOptions& options,
                          const std::function<void(std::size_t, std::size_t)>& progress,
                          const std::atomic<bool>* cancel,
                          const core::SignatureVerifier* verifier) {
  OpenedGroups groups(options);
  std::vector<std::string> errors;
  bool cancelled = false;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    const std::string& path = paths[i];
    if (isBundlePath(path)) {
      auto b = readBundle(path, verifier);
      if (!b.ok()) {
        errors.push_back(b.error().message);
      } else {
        for (std::size_t k = 0; k < b->members.size(); ++k) {
          SnapshotSource source;
          source.file = path + ":" + b->members[k];
          source.described = true;
          source.trust = std::move(b->opened[k].trust);
          source.signer = std::move(b->opened[k].signer);
          source.size = b->signed_bytes[k].size();
          source.signed_bytes = std::move(b->signed_bytes[k]);
          groups.add(std::move(b->opened[k].snapshot), std::move(source), path);
        }
      }
      if (progress) progress(i + 1, paths.size());
      continue;
    }
    auto snap = readSnapshot(path, verifier);
    if (snap.ok()) {
      SnapshotSource source;
      source.file = path;
      source.in_file = true;
      source.file_digest = std::move(snap->digest);
      source.described = true;
      source.trust = std::move(snap->trust);
      source.signer = std::move(snap->signer);
      source.size = snap->bytes;
      groups.add(std::move(snap->snapshot), std::move(source), path);
    } else {
      errors.push_back(snap.error().message);
    }
    if (progress) progress(i + 1, paths.size());
  }
  JobData out = groups.finish();
  out.errors = std::move(errors);
  out.cancelled = cancelled;
  return out;
}

}  // namespace ibc::console
