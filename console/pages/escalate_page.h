#pragma once

// `escalate` page: pick the nodes and findings to hand to the host side, read the PF
// runbook per suspect VF (core's pf-inspection, the same text `ibcollect bundle export`
// writes), and start the escalation: create the case in the collector (a job fetched from
// it, with a support certificate; the request runs on a worker thread) and give the
// `ibcollect bundle export --case` command that writes the bundle.

#include <QWidget>
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
  QString runbookMarkdown() const { return markdown_; }
  QString exportCommand() const;
  // The collector the job came from: enables "Create case" for jobs fetched from it.
  void setCollector(const CollectorSettings& settings);
  // Sends the case for the checked nodes and findings (on a worker); caseCreated or
  // caseFailed follows on the GUI thread.
  void createCase();
  QString caseId() const { return case_id_; }

 signals:
  void caseCreated(const QString& case_id, const QString& summary);
  void caseFailed(const QString& message);

 private:
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
};

}  // namespace ibc::console
