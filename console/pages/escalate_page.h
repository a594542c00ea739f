#pragma once

// `escalate` page: pick the nodes and findings to hand to the host side, read the PF
// runbook per suspect VF (core's pf-inspection, the same text `ibcollect bundle export`
// writes), and start the escalation. Cases in the collector and writing the bundle from the
// console are not available yet: the buttons say so and give the CLI command that does it.

#include <QWidget>

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

 private:
  void fillFindings();
  void updateRunbook();

  const JobData* job_ = nullptr;
  QListWidget* nodes_;
  QListWidget* findings_;
  QTextBrowser* runbook_;
  QLabel* command_;
  QPushButton* create_case_;
  QPushButton* write_bundle_;
  QString markdown_;
};

}  // namespace ibc::console
