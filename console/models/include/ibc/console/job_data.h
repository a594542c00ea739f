#pragma once

// What the console shows: snapshots read from .ibsnap files and diagnosed exactly as
// `ibcollect compare` does (core::judgeJob, core::buildReport), so the console and
// the CLI never disagree. No Qt widgets here; no I/O on the GUI thread (callers run
// loadSnapshotFiles on a worker).

#include <QByteArray>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ibc/console/node_counters.h"
#include "ibc/core/job_verdict.h"
#include "ibc/core/report.h"
#include "ibc/core/signing.h"
#include "ibcollect/v1/report.pb.h"
#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::console {

// Who signed a snapshot, as the collector judges it (docs/security.md): only the certificate of the
// agent of the node a snapshot describes may sign it.
struct SignerInfo {
  bool is_signed = false;
  bool checked = false;  // the chain was checked against the CA (else only the bytes)
  std::string name;      // the signer's CN ("" unsigned)
  std::string tenant;    // the signer's O
  bool is_node = false;  // an agent certificate of the node the snapshot describes
  std::string problem;   // why the signer is not the node; "" otherwise
};
// The signer of `envelope` (whose signature already holds) for `snapshot`.
SignerInfo describeSigner(const ::ibcollect::v1::SignedSnapshot& envelope,
                          const ::ibcollect::v1::Snapshot& snapshot, bool checked);
// Trust words (checkSnapshotSignature's) with what the collector would say of the signer.
std::string withSigner(std::string words, const SignerInfo& signer);

// A group of opened files that belong together: one tenant (the signer's) and one job. Files
// of several jobs or tenants are never judged as one job (issue 22).
struct OpenedGroup {
  std::string tenant;  // "" when unsigned
  std::string job_id;  // "" when the snapshots name none
  std::vector<std::string> files;
  bool shown = false;  // the group this JobData judged
};

// A job's snapshots as it keeps them: each in keptForm, serialized and compressed (parsed, a
// snapshot's many small messages and strings take several times its bytes, and its bytes deflate
// to a quarter: 2,000 parsed snapshots took ~30 MiB, kept so ~1.5 MiB). A page parses the one it
// reads (microseconds).
class KeptSnapshots {
 public:
  void push_back(const ::ibcollect::v1::Snapshot& kept);
  std::size_t size() const { return packed_.size(); }
  bool empty() const { return packed_.empty(); }
  // Snapshot `i` parsed again (it parses: the bytes are its own serialization).
  ::ibcollect::v1::Snapshot operator[](std::size_t i) const;
  // Snapshot `i` as core::serializeSnapshot wrote it.
  std::string bytes(std::size_t i) const;

 private:
  std::vector<QByteArray> packed_;  // qCompress of each serialization
};

struct JobData {
  // One per snapshot that could be read, in the order given; report.nodes() has the same
  // order and each node's label (unique even when two snapshots share a host name). Held
  // slim (keptForm: without counters, counter window, kernel log lines, raw text and parsed
  // logs, what a 2,000-node job cannot hold) and serialized; a page that shows a node whole
  // reads its snapshot again (readFullSnapshot). Identity, ports, devices and netdevs stay.
  KeptSnapshots snapshots;
  // Per snapshot (same order): its counters as the grid, the charts and the filters read them,
  // taken while it was whole; counter ids name counter_names.
  std::vector<NodeCounters> counters;
  CounterNames counter_names;
  // Per snapshot: its node's host name (Snapshot.node.hostname), what the charts group one
  // host's snapshots over time by.
  std::vector<std::string> hostnames;
  // Per snapshot that came from neither a file nor signed bytes (diagnosed in memory): its
  // whole serialized snapshot, for readFullSnapshot; "" otherwise. May be empty.
  std::vector<std::string> kept_bytes;
  // Per snapshot read from a file: the SHA-256 (hex) of the file's bytes as they were judged, so
  // that a page reading the file again knows it is still that file; "" otherwise. May be empty.
  std::vector<std::string> file_digests;
  ::ibcollect::v1::Report report;
  // Per snapshot (same order): how far its signature was checked, in words ("signed by
  // CN=node01 ..., checked against the CA", "UNSIGNED: ..."). Never "valid" unless it is.
  std::vector<std::string> trust;
  // Per snapshot (same order): who signed it and whether that is the node.
  std::vector<SignerInfo> signers;
  // What the opened files held, by tenant and job; one group when they were one job. Only
  // the shown group is judged here; the jobs page offers the others.
  std::vector<OpenedGroup> groups;
  // Per snapshot: its original signed .ibsnap bytes when they are not in a file (fetched from
  // the collector); "" for opened files (read again when a bundle is exported).
  std::vector<std::string> signed_files;
  // Per snapshot: the size in bytes of its signed .ibsnap (the opened file, or the envelope
  // in signed_files); what the escalate page says each snapshot member weighs. May be empty
  // (snapshots diagnosed in memory).
  std::vector<std::uint64_t> signed_sizes;
  // Files that could not be read or decoded, and snapshots refused because their signature
  // does not hold (changed after signing, unknown CA, expired): each a sentence naming the
  // file and the reason.
  std::vector<std::string> errors;
  bool cancelled = false;
  // From the collector: the tenant, and each snapshot's full hex id (parallel to
  // `snapshots`); empty for opened files. A case is created on these ids.
  std::string tenant;
  std::vector<std::string> snapshot_ids;
  // Each finding's node (index into report.nodes(), -1 when none) and each node's findings
  // (indexes into report.findings()): computed once by diagnoseSnapshots so that no page
  // scans every node for every finding (quadratic in a 2,000-node job).
  std::vector<int> finding_node;
  std::vector<std::vector<int>> node_findings;
  // Where it came from, for people ("3 file(s) in /data/run", "collector HOST:PORT, tenant T,
  // job J"); set by whoever loads it.
  std::string origin;
};

// How one signed envelope's signature holds. With a `verifier` (the CA is known) the chain
// and the signature are checked as `ibcollect verify` does; without one, the signature is
// checked against the signer's own certificate: bytes changed after signing are caught, who
// signed is not vouched for (and the words say so). An unsigned envelope is not refused (an
// `ibcollect snapshot` without --cert is unsigned) but its words say UNSIGNED.
struct SignatureTrust {
  bool refused = false;  // the signature does not hold: never show the snapshot
  std::string words;     // why refused, or how far it was checked
};
SignatureTrust checkSnapshotSignature(const ::ibcollect::v1::SignedSnapshot& envelope,
                                      const core::SignatureVerifier* verifier);

// What a loader knows of a snapshot besides itself.
struct SnapshotSource {
  std::string file;         // where it came from ("" when unknown): the node's source
  bool in_file = false;     // `file` is an .ibsnap to read again (else the whole snapshot is kept)
  std::string file_digest;  // with in_file: the SHA-256 (hex) of the bytes read
  // How far its signature was checked and who signed it (checkSnapshotSignature, describeSigner);
  // `described` false when nobody checked (snapshots diagnosed in memory).
  bool described = false;
  std::string trust;
  SignerInfo signer;
  std::string signed_bytes;  // its signed .ibsnap when it is in no file (collector, bundle)
  std::uint64_t size = 0;    // the signed .ibsnap's size in bytes; 0 when unknown
  std::string id;            // the collector's snapshot id; "" for opened files
};

// Builds a JobData one snapshot at a time, so that a large job is never held parsed whole
// (issue 22): each snapshot's counters are kept compact for the pages (nodeCountersOf), core
// judges the node's own evidence at once (core::JobJudgement) and the job keeps the snapshot
// slim (keptForm). finish() judges across the nodes: every finding is core::judgeJob's.
class JobAssembler {
 public:
  explicit JobAssembler(core::JobVerdictOptions options = {});
  void add(::ibcollect::v1::Snapshot snapshot, SnapshotSource source);
  std::size_t size() const { return job_.counters.size(); }
  JobData finish();

 private:
  core::JobJudgement judgement_;
  JobData job_;
  bool described_ = false;
};

// `progress(done, total)` is called after each file; setting `cancel` stops before the next
// file (what was read so far is diagnosed and returned, with `cancelled` set). Each file's
// signature is checked (checkSnapshotSignature with `verifier`, which may be null); a file
// whose signature does not hold is refused into `errors`, never shown.
JobData loadSnapshotFiles(const std::vector<std::string>& paths,
                          const core::JobVerdictOptions& options = {},
                          const std::function<void(std::size_t, std::size_t)>& progress = {},
                          const std::atomic<bool>* cancel = nullptr,
                          const core::SignatureVerifier* verifier = nullptr);

// The same diagnosis over snapshots already in memory (tests). `files` names where each came
// from ("" when unknown); it gives each node its source.
JobData diagnoseSnapshots(std::vector<::ibcollect::v1::Snapshot> snapshots,
                          const std::vector<std::string>& files,
                          const core::JobVerdictOptions& options = {});

// The node (index into report.nodes()) finding `finding` belongs to: the node with the
// finding's source (its file or tree), else with its node name; -1 when none.
int nodeOfFinding(const JobData& job, int finding);
// The findings of node `node` (indexes into report.findings(), in report order).
std::vector<int> findingsOfNode(const JobData& job, int node);
// Fills finding_node and node_findings from the report (diagnoseSnapshots calls it).
void indexFindings(JobData& job);
// Each report node's nccl-tests peak bus bandwidth as core takes it (core::peakBusbwGbs, kept when
// the job was loaded; nullopt where a node has none): what core::nodeBusbwOutliers judges.
std::vector<std::optional<double>> busbwPeaks(const JobData& job);

// Clears the raw text a snapshot carries beside its parsed results (NCCL logs, nccl-tests
// outputs, pasted tool outputs).
void dropRawText(::ibcollect::v1::Snapshot& snapshot);
// What the job keeps of a snapshot once it is judged: no raw text (dropRawText) and slim
// (core::slimSnapshot).
void keptForm(::ibcollect::v1::Snapshot& snapshot);

// Snapshot `node` whole (counters, kernel log, raw text), read again from where it came from
// (its signed bytes when at hand, else its file). An error names the file when it is gone,
// unreadable, or no longer holds the bytes that were judged (then File > Reload).
core::Result<::ibcollect::v1::Snapshot> readFullSnapshot(const JobData& job, int node);
// The same in two steps, for a worker that must not hold the job: where node `node`'s snapshot
// is read again from and how to know it (copied out of the job), then the read.
struct SnapshotRef {
  std::string where;         // its file, else its label: what an error names
  std::string file;          // an .ibsnap to read
  std::string signed_bytes;  // else its signed .ibsnap bytes
  std::string kept_bytes;    // else its whole serialized snapshot
  std::string digest;        // with `file`: its bytes' SHA-256 when judged ("" unknown)
};
core::Result<SnapshotRef> snapshotRef(const JobData& job, int node);
core::Result<::ibcollect::v1::Snapshot> readFullSnapshot(const SnapshotRef& ref);

// Where opening a job lands (worst first, console/README.md): the first finding, with a node, of
// the most severe group (severity, then the more specific code, as the findings page orders its
// groups), as its node, device and port; without one, the worst node's first port. Node -1
// for an empty job.
struct NodeSelection {
  int node = -1;
  std::string device;
  int port = 0;
};
NodeSelection firstLook(const JobData& job);

// Severity order used by every model: 0 ok, 1 info, 2 warning, 3 critical.
int severityRank(const std::string& severity);
// The node's worst port (index into node.ports(): the first of the highest worst_severity);
// -1 when it has no port.
int worstPort(const ::ibcollect::v1::NodeReport& node);

}  // namespace ibc::console
