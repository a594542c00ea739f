#pragma once

// `charts` page (QtCharts): per node across the job, nccl-tests busbw or one counter's
// delta (total without a window), outliers in red; or one counter across the snapshots of
// the selected node's host over time.

#include "pages/page.h"

class QChartView;
class QComboBox;
class QLabel;

namespace ibc::console {

struct JobData;

class ChartsPage : public Page {
  Q_OBJECT

 public:
  enum Mode { BusbwPerNode, CounterPerNode, CounterOverTime };

  explicit ChartsPage(QWidget* parent = nullptr);
  QString pageName() const override { return QStringLiteral("charts"); }
  QString pageTitle() const override { return tr("Charts"); }
  bool lazy() const override { return true; }
  void loadJob(LoadedJob* job) override;
  void selectNode(int node_index, const QString&, int) override { showNode(node_index); }
  void setJob(const JobData* job);
  void showNode(int node_index);
  void setMode(Mode mode);
  void setCounter(const QString& name);
  // What the chart shows now, in words (also under the chart).
  QString caption() const;

 private:
  void redraw();

  const JobData* job_ = nullptr;
  int node_ = -1;
  QComboBox* mode_;
  QComboBox* counter_;
  QLabel* caption_;
  QChartView* view_;
};

}  // namespace ibc::console
