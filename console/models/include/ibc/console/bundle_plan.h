#pragma once

// What the escalate page's bundle will carry, said before it is written (console/README.md
// `escalate`, §8): every member with its size, what each snapshot holds inside (NCCL logs,
// kernel log lines), and the findings core will judge for exactly the checked nodes.
//
// The bundle is built by core::buildBundle from signed snapshots only: it judges those
// snapshots again (judgeJob), so its findings.json, report.md and pf-inspection.* are the
// job verdict of the checked nodes alone. A finding the job shows only because of an
// unchecked peer (LINK_RATE_BELOW_EXPECTED known from the others' rates, NODE_OUTLIER) is
// not carried: the plan names each such difference so the page can say so. The plan renders
// the members with core's own renderers (judgeJob, buildReport, renderJson,
// buildPfInspection, renderBundleReport, the Redactor) the way buildBundle does; snapshot
// sizes are exact (their signed bytes), generated members are exact but for what only
// signing knows (the exporter's identity and the time in manifest.json and report.md, the
// signature), which are marked approximate.
//
// In two steps, like bundle_export.h: bundlePlanInputs() copies the checked nodes out of the
// job (GUI thread), planBundle() judges and renders (any thread; a worker in the page).

#include <QAbstractTableModel>
#include <cstdint>
#include <string>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

struct BundlePlanInputs {
  // Where the checked nodes' whole snapshots are read again from, in job order (the job keeps
  // them slim); planBundle reads them one by one.
  std::vector<SnapshotRef> checked;
  std::vector<std::string> labels;          // their labels in the job
  std::vector<std::uint64_t> signed_sizes;  // bytes of each signed .ibsnap; 0 unknown
  // Distinct finding codes the job verdict has for each checked node (what the pages show).
  std::vector<std::vector<std::string>> job_codes;
  std::string case_id;  // may be empty
};

// Copies the checked `nodes` (indexes into job.report.nodes(); unknown ones are skipped).
BundlePlanInputs bundlePlanInputs(const JobData& job, const std::vector<int>& nodes,
                                  const std::string& case_id);

struct PlannedMember {
  std::string name;         // "snapshots/node1661.ibsnap", "findings.json", ...
  std::uint64_t bytes = 0;  // its size in the archive (before compression)
  bool exact = true;        // false: known once signed (shown as "about")
  std::string contents;     // for people: what it holds
};

struct BundlePlan {
  bool redact = false;
  std::string job_id;  // the checked snapshots' job id when they agree (as the bundle's)
  // Every member, in archive order (snapshots first), manifest.json and manifest.sig last.
  std::vector<PlannedMember> members;
  // Redacted: the snapshots left out (with their sizes), and where the pseudonyms are.
  std::vector<PlannedMember> left_out;
  std::uint64_t total_bytes = 0;  // sum of members' bytes
  // One line per checked node: the codes the bundle carries for it ("node1661: CRITICAL
  // PORT_NOT_ACTIVE_SM, ESCALATE_HOST_INSPECTION").
  std::vector<std::string> carried;
  // Per checked node whose codes differ from the job verdict's (judged without its unchecked
  // peers): "node1720 (gpu02.ibsnap): not carried LINK_RATE_BELOW_EXPECTED, ..." / "added".
  std::vector<std::string> differences;
  int findings = 0;              // findings in findings.json
  int suspects = 0;              // suspect VFs in pf-inspection
  std::string pf_inspection_md;  // the member's text (the page's runbook pane)
  // Redacted: each host pseudonym and the name it replaces ("node-001", "node1661"), as
  // buildBundle's Redactor assigns them (a test holds the two together), for the page; the
  // map file beside the bundle is core's (Redactor::mapText: addresses and users too).
  std::vector<std::pair<std::string, std::string>> host_pseudonyms;
  // A checked node's snapshot could not be read again (its file gone or changed): why.
  std::string error;
};

// Reads the checked snapshots, judges and renders; empty plan (no member) when `inputs` has
// no snapshot, or with `error` set when one could not be read again.
BundlePlan planBundle(BundlePlanInputs inputs, bool redact);

// "812 bytes", "14.2 KiB", "3.1 MiB"; "about 1 KiB" when not exact.
std::string sizeWords(std::uint64_t bytes, bool exact = true);

// The plan's members as a table (the escalate page's "What will be sent").
class BundleMembersModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Member, Size, Contents, ColumnCount };
  static constexpr int SortRole = Qt::UserRole + 1;  // Size: bytes (a number)
  static constexpr int LeftOutRole = Qt::UserRole + 2;

  using QAbstractTableModel::QAbstractTableModel;
  void setPlan(BundlePlan plan);
  const BundlePlan& plan() const { return plan_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const PlannedMember& row(int r) const;
  BundlePlan plan_;
};

}  // namespace ibc::console
