#include "pages/charts_page.h"

#include "ibc/console/job_loader.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QCursor>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <functional>
#include <utility>

#include "ibc/console/job_data.h"

namespace ibc::console {

namespace {

const QColor kBar(0x4a, 0x78, 0xb0);
const QColor kOutlier(0xc6, 0x28, 0x28);

// Bins of the distribution drawn for a large job: enough to see its shape, few enough to
// label each.
constexpr int kMaxBins = 20;
// Bars labelled with their values (more would overlap).
constexpr int kMaxValueLabels = 16;
// Outliers named on the chart itself, in the caption and in the list beside it.
constexpr int kMaxAnnotations = 8;
constexpr int kMaxNamedInCaption = 5;
constexpr int kMaxListed = 500;
// A shared prefix shorter than this is left on the labels ("node" in node0042).
constexpr std::size_t kMinPrefix = 5;

QString q(const std::string& s) { return QString::fromStdString(s); }

// A value axis over [0, largest] (or [lo, hi]) with 1/2/5 × 10^k ticks, head room above the
// largest bar for its label and annotation.
QValueAxis* niceValueAxis(double lo, double hi, int max_ticks) {
  const NiceAxis a = niceAxis(lo, hi, max_ticks);
  auto* axis = new QValueAxis;
  axis->setRange(a.lo, a.hi);
  axis->setTickCount(a.tick_count);
  axis->setLabelFormat(QStringLiteral("%.%1f").arg(a.decimals));
  return axis;
}

// An outlier's name on the chart; a click on it does what a click on its bar does (a bin of
// one node among thousands is a few pixels high).
class ClickableName : public QGraphicsSimpleTextItem {
 public:
  ClickableName(const QString& text, QGraphicsItem* parent, std::function<void()> on_click)
      : QGraphicsSimpleTextItem(text, parent), on_click_(std::move(on_click)) {
    setCursor(Qt::PointingHandCursor);
    setZValue(100);  // above the bars and grid lines
    setBrush(kOutlier);
    QFont f = font();
    f.setBold(true);
    setFont(f);
  }

 protected:
  // On a light backing, readable over the grid lines and a neighbouring bar.
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override {
    painter->fillRect(boundingRect().adjusted(-2, 0, 2, 0), QColor(255, 255, 255, 225));
    QGraphicsSimpleTextItem::paint(painter, option, widget);
  }
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override { event->accept(); }
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override {
    event->accept();
    on_click_();
  }

 private:
  std::function<void()> on_click_;
};

QString binLabel(const Histogram& h, const HistogramBin& b) {
  return QStringLiteral("%1–%2").arg(b.lo, 0, 'f', h.decimals).arg(b.hi, 0, 'f', h.decimals);
}

}  // namespace

ChartsPage::ChartsPage(QWidget* parent) : Page(parent) {
  mode_ = new QComboBox(this);
  mode_->addItem(tr("nccl-tests busbw per node"), BusbwPerNode);
  mode_->addItem(tr("Counter per node (window delta, else total)"), CounterPerNode);
  mode_->addItem(tr("Counter over time (selected node's snapshots)"), CounterOverTime);
  counter_ = new QComboBox(this);
  counter_->setEditable(true);
  counter_->setInsertPolicy(QComboBox::NoInsert);
  counter_->setMinimumContentsLength(28);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  view_ = new QChartView(this);
  view_->setRenderHint(QPainter::Antialiasing);
  outlier_title_ = new QLabel(tr("Outliers, worst first\n(click one to select it)"), this);
  outlier_list_ = new QListWidget(this);
  outlier_list_->setUniformItemSizes(true);
  outlier_list_->setMaximumWidth(320);
  outlier_list_->setMinimumWidth(220);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Chart:"), this));
  bar->addWidget(mode_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Counter:"), this));
  bar->addWidget(counter_);
  bar->addStretch(1);
  auto* side = new QVBoxLayout;
  side->addWidget(outlier_title_);
  side->addWidget(outlier_list_, 1);
  auto* middle = new QHBoxLayout;
  middle->addWidget(view_, 1);
  middle->addLayout(side);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addLayout(middle, 1);
  layout->addWidget(caption_);

  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(counter_, &QComboBox::currentTextChanged, this, [this] { redraw(); });
  connect(outlier_list_, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    emit nodeSelected(item->data(Qt::UserRole).toInt(), QString(), 0);
  });
  connect(outlier_list_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    emit nodeSelected(item->data(Qt::UserRole).toInt(), QString(), 0);
  });
}

void ChartsPage::setJob(const JobData* job) {
  job_ = job;
  node_ = -1;
  const QSignalBlocker block(counter_);
  counter_->clear();
  if (job_ != nullptr) {
    for (const auto& n : counterNames(*job_)) counter_->addItem(q(n));
    // The counter an engineer looks at first for a bad link.
    const int i = counter_->findText(QStringLiteral("symbol_error"));
    if (i >= 0) counter_->setCurrentIndex(i);
    // Busbw when the job has nccl-tests results, else a counter.
    if (busbwPerNode(*job_).values.empty() && mode_->currentData().toInt() == BusbwPerNode)
      mode_->setCurrentIndex(mode_->findData(CounterPerNode));
  }
  redraw();
}

void ChartsPage::showNode(int node_index) {
  node_ = node_index;
  if (mode_->currentData().toInt() == CounterOverTime) {
    redraw();
    return;
  }
  const QSignalBlocker block(outlier_list_);
  outlier_list_->clearSelection();
  for (int r = 0; r < outlier_list_->count(); ++r) {
    if (outlier_list_->item(r)->data(Qt::UserRole).toInt() == node_index) {
      outlier_list_->setCurrentRow(r);
      break;
    }
  }
}

void ChartsPage::setMode(Mode mode) { mode_->setCurrentIndex(mode_->findData(mode)); }

void ChartsPage::setCounter(const QString& name) { counter_->setCurrentText(name); }

QString ChartsPage::caption() const { return caption_->text(); }

QString ChartsPage::barToolTip(int index) const {
  if (bars_ == nullptr || index < 0) return {};
  if (!distribution_) {
    if (index >= static_cast<int>(series_.values.size())) return {};
    return q(describeValue(series_, static_cast<std::size_t>(index)));
  }
  if (index >= static_cast<int>(histogram_.bins.size())) return {};
  const HistogramBin& b = histogram_.bins[static_cast<std::size_t>(index)];
  QString tip = tr("%1 to %2: %3 node(s)")
                    .arg(q(formatValue(series_, b.lo)), q(formatValue(series_, b.hi)))
                    .arg(b.count);
  if (b.outliers.empty())
    return tip + tr("\nno outlier (an outlier is %1)").arg(q(outlierRule(series_)));
  tip += tr("\n%1 outlier(s), %2:").arg(b.outliers.size()).arg(q(outlierRule(series_)));
  for (std::size_t k = 0; k < b.outliers.size() && k < kMaxAnnotations; ++k) {
    const NodeValue& v = series_.values[static_cast<std::size_t>(b.outliers[k])];
    tip += QStringLiteral("\n  %1 (%2)").arg(q(v.label), q(formatValue(series_, v.value)));
  }
  if (b.outliers.size() > kMaxAnnotations)
    tip += tr("\n  and %1 more (see the list)").arg(b.outliers.size() - kMaxAnnotations);
  return tip + tr("\nclick to select the first");
}

int ChartsPage::nodeOfBar(int index) const {
  if (bars_ == nullptr || index < 0) return -1;
  if (!distribution_) {
    if (index >= static_cast<int>(series_.values.size())) return -1;
    return series_.values[static_cast<std::size_t>(index)].node;
  }
  if (index >= static_cast<int>(histogram_.bins.size())) return -1;
  const HistogramBin& b = histogram_.bins[static_cast<std::size_t>(index)];
  const int k = b.outliers.empty() ? b.first : b.outliers.front();
  return k < 0 ? -1 : series_.values[static_cast<std::size_t>(k)].node;
}

void ChartsPage::connectBars() {
  // Hovering a bar tells its value and why it is (not) an outlier; a click selects its node.
  connect(bars_, &QBarSet::hovered, this, [this](bool status, int index) {
    if (status) {
      QToolTip::showText(QCursor::pos(), barToolTip(index), view_);
    } else {
      QToolTip::hideText();
    }
  });
  connect(bars_, &QBarSet::clicked, this, &ChartsPage::emitNodeOfBar);
}

void ChartsPage::emitNodeOfBar(int index) {
  const int node = nodeOfBar(index);
  if (node >= 0) emit nodeSelected(node, QString(), 0);
}

void ChartsPage::redraw() {
  auto* chart = new QChart;
  chart->legend()->hide();
  bars_ = nullptr;
  distribution_ = false;
  series_ = {};
  histogram_ = {};
  annotations_.clear();
  const Mode mode = static_cast<Mode>(mode_->currentData().toInt());
  counter_->setEnabled(mode != BusbwPerNode);
  QString caption;
  if (job_ == nullptr) {
    caption = tr("Open snapshots to chart them.");
  } else if (mode == CounterOverTime) {
    caption = drawOverTime(chart);
  } else {
    caption = drawPerNode(chart);
  }
  caption_->setText(caption);
  fillOutlierList();
  QChart* old = view_->chart();
  view_->setChart(chart);
  delete old;
  connect(chart, &QChart::plotAreaChanged, this, [this] { placeAnnotations(); });
  placeAnnotations();
}

QString ChartsPage::drawOverTime(QChart* chart) {
  const QString counter = counter_->currentText();
  const int node = node_ >= 0 ? node_ : 0;
  const auto points = counterOverTime(*job_, node, counter.toStdString());
  const QString host =
      node < job_->report.nodes_size() ? q(job_->report.nodes(node).node()) : QString();
  chart->setTitle(tr("%1 on %2 across its snapshots (total over all ports)").arg(counter, host));
  const CounterUnit unit = counterUnit(counter.toStdString());
  double hi = 0;
  double lo = 0;
  for (const auto& p : points) {
    hi = std::max(hi, p.value);
    lo = std::min(lo, p.value);
  }
  const UnitScale scale = unitScale(unit, hi);
  auto* line = new QLineSeries;
  line->setPointsVisible(true);
  for (const auto& p : points) line->append(static_cast<qreal>(p.unix_ms), p.value / scale.divisor);
  chart->addSeries(line);
  auto* x = new QDateTimeAxis;
  x->setFormat(QStringLiteral("MM-dd hh:mm:ss"));
  x->setTitleText(tr("collected at (local time)"));
  if (!points.empty()) {
    const qint64 first = points.front().unix_ms;
    const qint64 last = std::max<qint64>(points.back().unix_ms, first + 1000);
    x->setRange(QDateTime::fromMSecsSinceEpoch(first - 500, Qt::UTC),
                QDateTime::fromMSecsSinceEpoch(last + 500, Qt::UTC));
  }
  auto* y = niceValueAxis(lo / scale.divisor, std::max(hi / scale.divisor * 1.05, 1.0), 9);
  y->setTitleText(scale.suffix.empty() ? counter
                                       : QStringLiteral("%1 (%2)").arg(counter, q(scale.suffix)));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  line->attachAxis(x);
  line->attachAxis(y);
  if (points.size() < 2) {
    return tr("%1 has %2 snapshot(s) with %3: open more snapshots of this host (fetch "
              "several times) to see it over time.")
        .arg(host)
        .arg(points.size())
        .arg(counter);
  }
  return tr("%1 point(s), oldest first. A counter that climbs between snapshots is still "
            "counting.")
      .arg(points.size());
}

QString ChartsPage::drawPerNode(QChart* chart) {
  const bool busbw = mode_->currentData().toInt() == BusbwPerNode;
  const QString counter = counter_->currentText();
  series_ = busbw ? busbwPerNode(*job_) : counterPerNode(*job_, counter.toStdString());
  chart->setTitle(
      busbw ? tr("nccl-tests peak bus bandwidth per node")
            : tr("%1 per node (sum over its ports; window delta, else total)").arg(counter));
  const int have = static_cast<int>(series_.values.size());
  if (have == 0) {
    return busbw ? tr("No node has nccl-tests results: give them with --nccl-tests when "
                      "taking snapshots, or chart a counter.")
                 : tr("No node has a readable %1.").arg(counter);
  }
  distribution_ = have > kMaxBars;
  QString caption = distribution_ ? drawHistogram(chart) : drawBars(chart);
  const QString rule = q(outlierRule(series_));
  caption += series_.outliers() == 0 ? tr(" No outlier (an outlier is %1).").arg(rule)
                                     : tr(" %1 outlier(s) in red, %2: %3.")
                                           .arg(series_.outliers())
                                           .arg(rule, q(outlierNames(series_, kMaxNamedInCaption)));
  const auto [lowest, highest] =
      std::minmax_element(series_.values.begin(), series_.values.end(),
                          [](const NodeValue& a, const NodeValue& b) { return a.value < b.value; });
  if (have > 1 && lowest->value == highest->value)
    caption += tr(" Every node has %1.").arg(q(formatValue(series_, lowest->value)));
  if (!distribution_) {
    caption += tr(" Hover a bar for its value; click it to select its node.");
  } else if (series_.outliers() > 0) {
    caption += tr(" Click a red bin, a name on the chart or in the list to select the node.");
  } else {
    caption += tr(" Click a bin to select its first node.");
  }
  return caption;
}

QString ChartsPage::drawBars(QChart* chart) {
  std::vector<std::string> labels;
  for (const auto& v : series_.values) labels.push_back(v.label);
  const std::string prefix = commonLabelPrefix(labels, kMinPrefix);
  double largest = 0;
  for (const auto& v : series_.values) largest = std::max(largest, v.value);
  const bool busbw = series_.quantity == NodeQuantity::Busbw;
  const UnitScale scale = busbw ? UnitScale{1, "GB/s"} : unitScale(series_.unit, largest);

  bars_ = new QBarSet(busbw ? tr("busbw") : q(series_.counter));
  bars_->setColor(kBar);
  bars_->setSelectedColor(kOutlier);
  bars_->setLabelColor(Qt::black);
  QStringList categories;
  for (int i = 0; i < static_cast<int>(series_.values.size()); ++i) {
    const NodeValue& v = series_.values[static_cast<std::size_t>(i)];
    bars_->append(v.value / scale.divisor);
    categories << q(v.label.substr(prefix.size()));
    if (v.outlier) bars_->selectBar(i);
  }
  int annotated = 0;
  for (const int k : outliersWorstFirst(series_)) {
    if (annotated++ == kMaxAnnotations) break;
    const NodeValue& v = series_.values[static_cast<std::size_t>(k)];
    auto* item = new ClickableName(q(v.label), chart, [this, k] { emitNodeOfBar(k); });
    annotations_.push_back({item, static_cast<double>(k), v.value / scale.divisor});
  }
  auto* series = new QBarSeries;
  series->append(bars_);
  series->setLabelsVisible(series_.values.size() <= kMaxValueLabels);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value"));
  series->setLabelsPrecision(4);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  if (categories.size() > 8) x->setLabelsAngle(-60);
  x->setTitleText(prefix.empty() ? tr("node")
                                 : tr("node (every name starts with \"%1\")").arg(q(prefix)));
  // Head room above the tallest bar for its value label, and for its name when it is an
  // outlier.
  bool tallest_named = false;
  for (const auto& a : annotations_)
    tallest_named = tallest_named || a.value * scale.divisor >= largest * 0.8;
  const double headroom = tallest_named ? 1.3 : 1.1;
  auto* y = niceValueAxis(0, std::max(largest / scale.divisor * headroom, 1.0), 9);
  y->setTitleText(busbw ? tr("peak busbw (GB/s)")
                  : scale.suffix.empty()
                      ? tr("%1 (count)").arg(q(series_.counter))
                      : QStringLiteral("%1 (%2)").arg(q(series_.counter), q(scale.suffix)));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  connectBars();
  return tr("%1 of %2 node(s) have it.")
      .arg(q(formatAmount(static_cast<double>(series_.values.size()), CounterUnit::Count)),
           q(formatAmount(series_.nodes, CounterUnit::Count)));
}

QString ChartsPage::drawHistogram(QChart* chart) {
  const bool busbw = series_.quantity == NodeQuantity::Busbw;
  double largest = 0;
  for (const auto& v : series_.values) largest = std::max(largest, std::abs(v.value));
  const UnitScale scale = busbw ? UnitScale{1, "GB/s"} : unitScale(series_.unit, largest);
  histogram_ = histogramOf(series_, kMaxBins, scale.divisor);
  // Bin edges in the axis's unit (GiB...).
  Histogram shown = histogram_;
  for (auto& b : shown.bins) {
    b.lo /= scale.divisor;
    b.hi /= scale.divisor;
  }

  bars_ = new QBarSet(tr("nodes"));
  bars_->setColor(kBar);
  bars_->setSelectedColor(kOutlier);
  bars_->setLabelColor(Qt::black);
  QStringList categories;
  int tallest = 1;
  for (int b = 0; b < static_cast<int>(histogram_.bins.size()); ++b) {
    const HistogramBin& bin = histogram_.bins[static_cast<std::size_t>(b)];
    bars_->append(bin.count);
    // Many bins: each labelled by its lower edge (the axis title gives the width; a range
    // "160–170" was cut to "160–…" at 18 bins).
    const HistogramBin& edges = shown.bins[static_cast<std::size_t>(b)];
    categories << (histogram_.bins.size() > 10 ? QString::number(edges.lo, 'f', shown.decimals)
                                               : binLabel(shown, edges));
    tallest = std::max(tallest, bin.count);
    if (bin.outliers.empty()) continue;
    bars_->selectBar(b);
    QString text;
    const std::size_t named = std::min<std::size_t>(bin.outliers.size(), 2);
    for (std::size_t k = 0; k < named; ++k) {
      const NodeValue& v = series_.values[static_cast<std::size_t>(bin.outliers[k])];
      if (k > 0) text += QLatin1Char('\n');
      text += QStringLiteral("%1 (%2)").arg(q(v.label), q(formatValue(series_, v.value)));
    }
    if (bin.outliers.size() > named) text += tr("\n+%1 more").arg(bin.outliers.size() - named);
    auto* item = new ClickableName(text, chart, [this, b] { emitNodeOfBar(b); });
    annotations_.push_back({item, static_cast<double>(b), static_cast<double>(bin.count)});
  }
  auto* series = new QBarSeries;
  series->append(bars_);
  series->setBarWidth(0.95);
  series->setLabelsVisible(true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value"));
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  const QString unit_words =
      busbw                  ? tr("peak busbw (GB/s)")
      : scale.suffix.empty() ? tr("%1 (count)").arg(q(series_.counter))
                             : QStringLiteral("%1 (%2)").arg(q(series_.counter), q(scale.suffix));
  x->setTitleText(
      histogram_.bins.size() > 10
          ? tr("%1, bins of %2 (each labelled by its lower edge)").arg(unit_words, stepWords())
          : tr("%1, bins of %2").arg(unit_words, stepWords()));
  auto* y = niceValueAxis(0, tallest * 1.15, 9);
  y->setLabelFormat(QStringLiteral("%.0f"));
  y->setTitleText(tr("nodes"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  chart->setTitle(
      chart->title() +
      tr(": distribution over %1 nodes")
          .arg(q(formatAmount(static_cast<double>(series_.values.size()), CounterUnit::Count))));
  connectBars();
  return tr("%1 of %2 node(s) have it: too many for a bar each, so the chart shows how many "
            "nodes fall in each range of %3.")
      .arg(q(formatAmount(static_cast<double>(series_.values.size()), CounterUnit::Count)),
           q(formatAmount(series_.nodes, CounterUnit::Count)), stepWords());
}

QString ChartsPage::stepWords() const {
  if (series_.quantity == NodeQuantity::Busbw)
    return QStringLiteral("%1 GB/s").arg(histogram_.step, 0, 'f', histogram_.decimals);
  double largest = 0;
  for (const auto& v : series_.values) largest = std::max(largest, std::abs(v.value));
  const UnitScale scale = unitScale(series_.unit, largest);
  const QString step = QString::number(histogram_.step / scale.divisor, 'f', histogram_.decimals);
  return scale.suffix.empty() ? step : step + QLatin1Char(' ') + q(scale.suffix);
}

void ChartsPage::fillOutlierList() {
  outlier_list_->clear();
  const auto worst = outliersWorstFirst(series_);
  for (std::size_t k = 0; k < worst.size() && k < kMaxListed; ++k) {
    const NodeValue& v = series_.values[static_cast<std::size_t>(worst[k])];
    auto* item = new QListWidgetItem(
        QStringLiteral("%1  %2").arg(q(v.label), q(formatValue(series_, v.value))));
    item->setData(Qt::UserRole, v.node);
    item->setToolTip(q(describeValue(series_, static_cast<std::size_t>(worst[k]))));
    item->setForeground(kOutlier);
    outlier_list_->addItem(item);
  }
  if (worst.size() > kMaxListed) {
    auto* more = new QListWidgetItem(
        tr("and %1 more: sort the grid by this column").arg(worst.size() - kMaxListed));
    more->setFlags(Qt::NoItemFlags);
    outlier_list_->addItem(more);
  }
  outlier_title_->setVisible(!worst.empty());
  outlier_list_->setVisible(!worst.empty());
}

void ChartsPage::placeAnnotations() {
  QChart* chart = view_->chart();
  if (chart == nullptr || annotations_.empty() || chart->series().isEmpty()) return;
  QAbstractSeries* series = chart->series().front();
  const QRectF plot = chart->plotArea();
  std::vector<QRectF> placed;
  for (const Annotation& a : annotations_) {
    const QPointF top = chart->mapToPosition(QPointF(a.category, a.value), series);
    const QRectF box = a.item->boundingRect();
    // Above the bar and its value label; never above the plot area, never over another name.
    QRectF at(top.x() - box.width() / 2, top.y() - box.height() - 18, box.width(), box.height());
    at.moveLeft(
        std::clamp(at.left(), plot.left(), std::max(plot.left(), plot.right() - at.width())));
    at.moveTop(std::max(at.top(), plot.top()));
    for (std::size_t tries = 0; tries <= placed.size(); ++tries) {
      const auto hit = std::find_if(placed.begin(), placed.end(),
                                    [&](const QRectF& other) { return at.intersects(other); });
      if (hit == placed.end()) break;
      at.moveBottom(hit->top() - 2);
      if (at.top() < plot.top()) {
        at.moveTop(plot.top());
        break;
      }
    }
    placed.push_back(at);
    a.item->setPos(at.topLeft());
  }
}

void ChartsPage::loadJob(LoadedJob* job) { setJob(job != nullptr ? job->data.get() : nullptr); }

}  // namespace ibc::console
