#pragma once

// `escalate` page: pick the nodes and findings to hand to the host side, read the PF
// runbook per suspect VF (core's pf-inspection, the same text `ibcollect bundle export`
// writes), create the case in the collector (a job fetched from it, with a support
// certificate; on a worker thread) and export the escalation bundle of the checked nodes,
// signed with the engineer's certificate (the same library code as `ibcollect bundle
// export`).

#include <QWidget>
#include <functional>
#include <set>

#include "ibc/console/collector_source.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace ibc::console {

struct JobData;

class EscalatePage : public QWidget {
  Q_OBJECT

 public:
  explicit EscalatePage(QWidget* parent = nullptr);
  void setJob(const JobData* job);
  // Suspects checked: (node indexes); the runbook follows the checks.
  QList<int> checkedNodes() const;
  // Checks exactly these nodes (as the engineer's clicks do).
  void checkNodes(const QList<int>& nodes);
  QString runbookMarkdown() const { return markdown_; }
  QString exportCommand() const;
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

 private:
  // Shows the outcome of an export and emits exported().
  void exportDone(bool ok, const QString& message);
  void fillFindings();
  void updateRunbook();
  void updateCaseButton();
  std::set<int> checkedFindings() const;

  const JobData* job_ = nullptr;
  QListWidget* nodes_;
  QListWidget* findings_;
  QTextBrowser* runbook_;
  QLabel* command_;
  QPushButton* create_case_;
  QPushButton* write_bundle_;
  QString markdown_;
  CollectorSettings settings_;
  QString case_id_;
  bool sending_ = false;
  bool exporting_ = false;  // a bundle is being written: the button waits
  std::function<CollectorSettings()> credentials_;
};

}  // namespace ibc::console
