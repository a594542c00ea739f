#include "pages/charts_page.h"

#include "ibc/console/job_loader.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "ibc/console/chart_data.h"
#include "ibc/console/job_data.h"

namespace ibc::console {

namespace {

// Bars beyond this many are unreadable: the chart keeps the highest (busbw: the lowest)
// and says so.
constexpr int kMaxBars = 48;

const QColor kBar(0x4a, 0x78, 0xb0);
const QColor kOutlier(0xc6, 0x28, 0x28);

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
  view_ = new QChartView(this);
  view_->setRenderHint(QPainter::Antialiasing);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Chart:"), this));
  bar->addWidget(mode_);
  bar->addSpacing(12);
  bar->addWidget(new QLabel(tr("Counter:"), this));
  bar->addWidget(counter_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(view_, 1);
  layout->addWidget(caption_);

  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(counter_, &QComboBox::currentTextChanged, this, [this] { redraw(); });
}

void ChartsPage::setJob(const JobData* job) {
  job_ = job;
  node_ = -1;
  const QSignalBlocker block(counter_);
  counter_->clear();
  if (job_ != nullptr) {
    for (const auto& n : counterNames(*job_)) counter_->addItem(QString::fromStdString(n));
    // The counter an engineer looks at first for a bad link.
    const int i = counter_->findText(QStringLiteral("symbol_error"));
    if (i >= 0) counter_->setCurrentIndex(i);
    // Busbw when the job has nccl-tests results, else a counter.
    if (busbwPerNode(*job_).empty() && mode_->currentData().toInt() == BusbwPerNode)
      mode_->setCurrentIndex(mode_->findData(CounterPerNode));
  }
  redraw();
}

void ChartsPage::showNode(int node_index) {
  node_ = node_index;
  if (mode_->currentData().toInt() == CounterOverTime) redraw();
}

void ChartsPage::setMode(Mode mode) { mode_->setCurrentIndex(mode_->findData(mode)); }

void ChartsPage::setCounter(const QString& name) { counter_->setCurrentText(name); }

QString ChartsPage::caption() const { return caption_->text(); }

void ChartsPage::redraw() {
  auto* chart = new QChart;
  chart->legend()->hide();
  QString caption;
  const Mode mode = static_cast<Mode>(mode_->currentData().toInt());
  const QString counter = counter_->currentText();
  counter_->setEnabled(mode != BusbwPerNode);
  if (job_ == nullptr) {
    caption = tr("Open snapshots to chart them.");
  } else if (mode == CounterOverTime) {
    const int node = node_ >= 0 ? node_ : 0;
    const auto points = counterOverTime(*job_, node, counter.toStdString());
    const QString host = node < job_->report.nodes_size()
                             ? QString::fromStdString(job_->report.nodes(node).node())
                             : QString();
    chart->setTitle(tr("%1 on %2 across its snapshots (total over all ports)").arg(counter, host));
    if (points.size() < 2) {
      caption = tr("%1 has %2 snapshot(s) with %3: open more snapshots of this host (fetch "
                   "several times) to see it over time.")
                    .arg(host)
                    .arg(points.size())
                    .arg(counter);
    }
    auto* line = new QLineSeries;
    line->setPointsVisible(true);
    double lo = 0;
    double hi = 1;
    for (const auto& p : points) {
      line->append(static_cast<qreal>(p.unix_ms), p.value);
      hi = std::max(hi, p.value);
      lo = std::min(lo, p.value);
    }
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
    auto* y = new QValueAxis;
    y->setRange(lo, hi * 1.1);
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->setTitleText(counter);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    line->attachAxis(x);
    line->attachAxis(y);
    if (caption.isEmpty())
      caption = tr("%1 point(s), oldest first. A counter that climbs between snapshots is "
                   "still counting.")
                    .arg(points.size());
  } else {
    const bool busbw = mode == BusbwPerNode;
    auto values = busbw ? busbwPerNode(*job_) : counterPerNode(*job_, counter.toStdString());
    const int have = static_cast<int>(values.size());
    // The bars that matter: the lowest busbw, the highest counters.
    std::stable_sort(values.begin(), values.end(), [busbw](const NodeValue& a, const NodeValue& b) {
      return busbw ? a.value < b.value : a.value > b.value;
    });
    if (static_cast<int>(values.size()) > kMaxBars) values.resize(kMaxBars);
    std::stable_sort(values.begin(), values.end(),
                     [](const NodeValue& a, const NodeValue& b) { return a.node < b.node; });
    auto* set = new QBarSet(busbw ? tr("busbw") : counter);
    set->setColor(kBar);
    set->setSelectedColor(kOutlier);
    QStringList labels;
    double hi = 1;
    int outliers = 0;
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
      set->append(values[static_cast<std::size_t>(i)].value);
      labels << QString::fromStdString(values[static_cast<std::size_t>(i)].label);
      hi = std::max(hi, values[static_cast<std::size_t>(i)].value);
      if (values[static_cast<std::size_t>(i)].outlier) {
        set->selectBar(i);
        ++outliers;
      }
    }
    auto* series = new QBarSeries;
    series->append(set);
    series->setLabelsVisible(values.size() <= 16);
    series->setLabelsFormat(busbw ? QStringLiteral("@value") : QStringLiteral("@value"));
    series->setLabelsPrecision(busbw ? 4 : 12);
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(labels);
    if (labels.size() > 8) x->setLabelsAngle(-60);
    auto* y = new QValueAxis;
    y->setRange(0, hi * 1.15);
    y->setLabelFormat(busbw ? QStringLiteral("%.0f") : QStringLiteral("%.0f"));
    y->setTitleText(busbw ? tr("peak busbw (GB/s)") : counter);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    chart->setTitle(busbw ? tr("nccl-tests peak bus bandwidth per node")
                          : tr("%1 per node (sum over its ports)").arg(counter));
    if (have == 0) {
      caption = busbw ? tr("No node has nccl-tests results: give them with --nccl-tests when "
                           "taking snapshots, or chart a counter.")
                      : tr("No node has a readable %1.").arg(counter);
    } else {
      caption = tr("%1 of %2 node(s) have it").arg(have).arg(job_->report.nodes_size());
      if (have > kMaxBars)
        caption +=
            tr("; the %1 %2 are shown").arg(kMaxBars).arg(busbw ? tr("lowest") : tr("highest"));
      caption += outliers == 0
                     ? tr(". No outlier.")
                     : tr(". %1 outlier(s) in red (%2).")
                           .arg(outliers)
                           .arg(busbw ? tr("below half the median") : tr("above 10x the median"));
    }
  }
  caption_->setText(caption);
  QChart* old = view_->chart();
  view_->setChart(chart);
  delete old;
}

void ChartsPage::loadJob(LoadedJob* job) { setJob(job != nullptr ? job->data.get() : nullptr); }

}  // namespace ibc::console
