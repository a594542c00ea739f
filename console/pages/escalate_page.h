#pragma once

// `escalate` page: pick the nodes and findings to hand to the host side, see what the
// bundle will carry before it is written (every member with its size, the findings core
// judges for exactly the checked nodes, the PF runbook; bundle_plan.h, computed on a worker),
// choose redaction, create the case in the collector or update the job's existing one (a job
// fetched from it, with a support certificate; on a worker thread) and export the escalation
// bundle of exactly the checked nodes, signed with the engineer's certificate (the same
// library code as `ibcollect bundle export`). Suspects (core's escalations) come first and
// checked, each with its reason codes and kind in words.

#include <functional>
#include <optional>
#include <set>
#include "pages/page.h"

#include "ibc/console/bundle_plan.h"
#include "ibc/console/collector_source.h"
#include "ibc/console/escalation.h"

class QCheckBox;
class QLabel;
class QListView;
class QPlainTextEdit;
class QPushButton;
class QTableView;
class QTextBrowser;

namespace ibc::console {

class CheckListModel;

struct JobData;

class EscalatePage : public Page {
  Q_OBJECT

 public:
  explicit EscalatePage(QWidget* parent = nullptr);
  static constexpr const char* kName = "escalate";
  QString pageName() const override { return QString::fromLatin1(kName); }
  QString pageTitle() const override { return tr("Escalate"); }
  bool lazy() const override { return true; }
  void loadJob(LoadedJob* job) override;
  void selectNode(int, const QString&, int) override {}
  void setJob(const JobData* job);
  // Suspects checked: (node indexes); the runbook follows the checks.
  QList<int> checkedNodes() const;
  // Checks exactly these nodes (as the engineer's clicks do).
  void checkNodes(const QList<int>& nodes);
  // The bundle's pf-inspection.md for the checked nodes (what the runbook pane shows).
  QString runbookMarkdown() const { return markdown_; }
  // `ibcollect bundle export ...` for the checked nodes, with the job id (or case) filled in;
  // hostCommand() the host-inspect line for the same bundle.
  QString exportCommand() const;
  QString hostCommand() const;
  // What the bundle will carry (the last plan computed; planned() says when it is current).
  const BundlePlan& plan() const { return members_model_->plan(); }
  BundleMembersModel* membersModel() const { return members_model_; }
  // The redaction choice (bundle export --redact).
  void setRedact(bool redact);
  bool redact() const;
  // The node list's text of node `node` (index into report.nodes()), "" when not listed.
  QString nodeText(int node) const;
  // True when the plan shown is the one for the current checks (none is being computed).
  // The page is ready (Page::isReady) exactly when it is.
  bool planCurrent() const { return plan_applied_ == plan_generation_ && !suspects_pending_; }
  // Jobs of this many nodes and more have their suspects worked out on a worker (loadJob);
  // suspectsReady follows.
  static constexpr int kSuspectsOnAWorkerFrom = 1000;
  bool suspectsPending() const { return suspects_pending_; }
  // The job's existing case (listed from the collector, or made here), if any.
  const std::optional<::ibcollect::v1::Case>& existingCase() const { return case_; }
  // Where the engineer's certificate and key are (the jobs page's fields).
  void setCredentialSource(std::function<CollectorSettings()> source) {
    credentials_ = std::move(source);
  }
  // Writes the bundle of the checked nodes to `path` on a worker thread; exported() follows
  // on the GUI thread either way (at once when nothing can be written, e.g. no node checked).
  // The button asks for the path with a file dialog, then calls this.
  void exportBundle(const QString& path);
  // The button: a save dialog, then exportBundle().
  void exportWithDialog();
  // The collector the job came from: enables "Create case" for jobs fetched from it.
  void setCollector(const CollectorSettings& settings);
  // Sends the case for the checked nodes and findings (on a worker): creates it, or once
  // one exists for this job adds the checked nodes, snapshots and codes to it. caseCreated
  // (also after an update) or caseFailed follows on the GUI thread.
  void createCase();
  QString caseId() const { return case_id_; }

 signals:
  void exported(bool ok, const QString& message);
  void caseCreated(const QString& case_id, const QString& summary);
  void caseFailed(const QString& message);
  // The plan for the current checks is computed and shown.
  void planned();
  void suspectsReady();
  // The collector's cases were listed for the job (found: it has one).
  void casesListed(bool found);

 private:
  // Page::setReady(planCurrent()): after every change of the plan's or the suspects' state.
  void updateReady() { setReady(planCurrent()); }
  // Shows the outcome of an export and emits exported().
  void exportDone(bool ok, const QString& message);
  // The constructor's steps: the widgets, where they go, what they do.
  void createWidgets();
  void layOut();
  void connectWidgets();
  // The job with its suspects (core's escalations, worst first), shown.
  void showJob(const JobData* job, std::vector<SuspectReason> reasons);
  void fillFindings();
  void updateCaseButton();
  void updateExportButton();
  void showRunbook();
  void updateCommand();
  void replan();
  void listJobCases();
  void checksChanged();
  std::set<int> checkedFindings() const;

  const JobData* job_ = nullptr;
  CheckListModel* nodes_model_;
  CheckListModel* findings_model_;
  QListView* nodes_;
  QListView* findings_;
  QTextBrowser* runbook_;
  QTableView* members_;
  BundleMembersModel* members_model_;
  QCheckBox* redact_;
  QPlainTextEdit* carried_;
  QLabel* case_label_;
  QPlainTextEdit* command_;
  QLabel* status_;
  QPushButton* create_case_;
  QPushButton* write_bundle_;
  QString markdown_;
  CollectorSettings settings_;
  QString case_id_;
  std::optional<::ibcollect::v1::Case> case_;
  int plan_generation_ = 0;      // the newest plan asked for; older answers are dropped
  int suspects_generation_ = 0;  // the newest job's suspects asked for (loadJob's worker)
  bool suspects_pending_ = false;
  int plan_applied_ = 0;  // the plan shown
  int cases_generation_ = 0;
  bool sending_ = false;
  bool exporting_ = false;  // a bundle is being written: the button waits
  std::function<CollectorSettings()> credentials_;
};

}  // namespace ibc::console
