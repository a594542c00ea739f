#pragma once

// `charts` page (QtCharts): per node across the job, nccl-tests busbw or one counter's
// delta (total without a window), or one counter across the snapshots of the selected
// node's host over time. Up to kMaxBars nodes get a bar each (labelled by what tells their
// names apart, the shared prefix in the axis title); a larger job is drawn as a histogram
// (chart_data.h histogramOf) so that 10,000 nodes cost as little as 20 bins. Outliers (core's
// rules) are red, named on the chart, in the caption and in a list beside it; hovering a bar
// tells its value and whether and why it is an outlier; clicking a bar, a bin of outliers or
// a name in the list emits nodeSelected.

#include <QString>
#include <vector>

#include "pages/page.h"

#include "ibc/console/chart_data.h"

class QBarSet;
class QChart;
class QChartView;
class QComboBox;
class QGraphicsSimpleTextItem;
class QLabel;
class QListWidget;

namespace ibc::console {

struct JobData;

class ChartsPage : public Page {
  Q_OBJECT

 public:
  enum Mode { BusbwPerNode, CounterPerNode, CounterOverTime };
  // More nodes than this with a value are drawn as a distribution, not one bar each.
  static constexpr int kMaxBars = 48;

  explicit ChartsPage(QWidget* parent = nullptr);
  static constexpr const char* kName = "charts";
  QString pageName() const override { return QString::fromLatin1(kName); }
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

  QChartView* chartView() const { return view_; }
  // The per-node chart is a histogram (a large job) rather than one bar per node.
  bool showsDistribution() const { return distribution_; }
  // The outliers beside the chart, worst first; an item's Qt::UserRole is its node index.
  QListWidget* outlierList() const { return outlier_list_; }
  // The per-node chart's one bar set (nullptr in the over-time mode or without values).
  QBarSet* barSet() const { return bars_; }
  // The tooltip of bar `index` of the per-node chart (a node, or a bin of the histogram).
  QString barToolTip(int index) const;
  // The node a click on bar `index` selects (a bin: its worst outlier, else its first
  // node); -1 for none.
  int nodeOfBar(int index) const;

 private:
  void redraw();
  void connectBars();
  void emitNodeOfBar(int index);
  QString drawOverTime(QChart* chart);
  QString drawPerNode(QChart* chart);
  QString drawBars(QChart* chart);
  QString drawHistogram(QChart* chart);
  // The histogram's bin width in words ("20 GB/s", "512 KiB").
  QString stepWords() const;
  void fillOutlierList();
  // The outliers' names on the chart (QGraphicsSimpleTextItem: a click on one selects its
  // node). Puts each annotation above its bar once the plot area is known (and on every resize).
  void placeAnnotations();

  struct Annotation {
    QGraphicsSimpleTextItem* item = nullptr;  // owned by the chart
    double category = 0;                      // x: the bar's index
    double value = 0;                         // y: the bar's top, in the axis's numbers
  };

  const JobData* job_ = nullptr;
  int node_ = -1;
  QComboBox* mode_;
  QComboBox* counter_;
  QLabel* caption_;
  QChartView* view_;
  QLabel* outlier_title_;
  QListWidget* outlier_list_;
  // What the per-node chart shows.
  NodeSeries series_;
  Histogram histogram_;
  bool distribution_ = false;
  QBarSet* bars_ = nullptr;
  std::vector<Annotation> annotations_;
};

}  // namespace ibc::console
