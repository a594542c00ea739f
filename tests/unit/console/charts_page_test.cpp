// pages/charts_page.h: busbw per node of a SYNTHETIC job made from a real capture and a real
// all_reduce_perf output (busbwJob): bars with a shared prefix said once, nice ticks and the
// outliers named for a few nodes; a distribution for thousands; a click selects a node.

#include <gtest/gtest.h>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QListWidget>
#include <QSignalSpy>
#include <QTest>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "console_fixtures.h"
#include "pages/charts_page.h"

namespace ibc::console {
namespace {

// Where bar `index` of the page's bar chart is, in its view's viewport (half its height up).
QPoint barPoint(ChartsPage& page, int index) {
  QChart* chart = page.chartView()->chart();
  const double value = page.barSet()->at(index);
  const QPointF at = chart->mapToPosition(QPointF(index, value / 2), chart->series().front());
  return page.chartView()->mapFromScene(chart->mapToScene(at));
}

// The busbw chart of `job` on a shown page `width` pixels wide; false when it never showed.
bool showBusbw(ChartsPage& page, const JobData& job, int width) {
  page.resize(width, 800);
  page.show();
  page.setJob(&job);
  page.setMode(ChartsPage::BusbwPerNode);
  return QTest::qWaitForWindowExposed(&page);
}

TEST(ChartsPageUi, SixteenNodesAreBarsLabelledByWhatTellsThemApartWithNiceTicksAndAClickSelects) {
  const JobData job = busbwJob(16, {{11, 97.5}});
  const int slow = nodeNamed(job, "gpu-h100-r07-n0011");
  ASSERT_GE(slow, 0);
  ChartsPage page;
  ASSERT_TRUE(showBusbw(page, job, 1200));
  EXPECT_FALSE(page.showsDistribution());
  ASSERT_NE(page.barSet(), nullptr);
  ASSERT_EQ(page.barSet()->count(), 16);
  QChart* chart = page.chartView()->chart();
  // The x labels are what differs (n0000 ... n0015); the shared prefix is said once.
  auto* x = qobject_cast<QBarCategoryAxis*>(chart->axes(Qt::Horizontal).front());
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->at(11), QStringLiteral("n0011"));
  EXPECT_TRUE(x->titleText().contains(QStringLiteral("gpu-h100-r07-")))
      << x->titleText().toStdString();
  // Nice ticks: from 0 by 1, 2 or 5 × 10^k.
  auto* y = qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front());
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->min(), 0);
  const double step = (y->max() - y->min()) / (y->tickCount() - 1);
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 ||
              std::fabs(mantissa - 5) < 1e-9)
      << step;
  EXPECT_GE(y->max(), 354);
  EXPECT_TRUE(y->titleText().contains(QStringLiteral("GB/s")));
  // The slow node is red, named in the caption, the list and on the chart.
  EXPECT_TRUE(page.barSet()->isBarSelected(11));
  EXPECT_EQ(page.barSet()->selectedBars(), QList<int>{11});
  EXPECT_TRUE(page.caption().contains(QStringLiteral("1 outlier(s)")));
  EXPECT_TRUE(page.caption().contains(QStringLiteral("gpu-h100-r07-n0011 (97.5 GB/s)")))
      << page.caption().toStdString();
  ASSERT_EQ(page.outlierList()->count(), 1);
  EXPECT_EQ(page.outlierList()->item(0)->data(Qt::UserRole).toInt(), slow);
  // Its tooltip says the value, that it is an outlier, and why.
  const QString tip = page.barToolTip(11);
  EXPECT_TRUE(tip.contains(QStringLiteral("gpu-h100-r07-n0011: 97.5 GB/s"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("outlier: below 80% of the job's median")));
  EXPECT_TRUE(page.barToolTip(3).contains(QStringLiteral("not an outlier")));

  // A click on a bar (the mouse, on the view) selects its node; so does the list.
  QSignalSpy selected(&page, &ChartsPage::nodeSelected);
  QTest::mouseClick(page.chartView()->viewport(), Qt::LeftButton, {}, barPoint(page, 11));
  ASSERT_GE(selected.count(), 1);
  EXPECT_EQ(selected.last().at(0).toInt(), slow);
  EXPECT_EQ(selected.last().at(1).toString(), QString());
  EXPECT_EQ(selected.last().at(2).toInt(), 0);
  QTest::mouseClick(page.chartView()->viewport(), Qt::LeftButton, {}, barPoint(page, 4));
  EXPECT_EQ(selected.last().at(0).toInt(), nodeNamed(job, "gpu-h100-r07-n0004"));
  selected.clear();
  const QRect item = page.outlierList()->visualItemRect(page.outlierList()->item(0));
  QTest::mouseClick(page.outlierList()->viewport(), Qt::LeftButton, {}, item.center());
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected.last().at(0).toInt(), slow);
}

TEST(ChartsPageUi, TwoThousandNodesAreADistributionWithTheOutliersNamedAndTheirBinSelectsThem) {
  const JobData job = busbwJob(2000, {{42, 97.5}, {1234, 121.0}, {1999, 250.0}});
  const int worst = nodeNamed(job, "gpu-h100-r07-n0042");
  ChartsPage page;
  ASSERT_TRUE(showBusbw(page, job, 1400));
  ASSERT_TRUE(page.showsDistribution());
  ASSERT_NE(page.barSet(), nullptr);
  EXPECT_LE(page.barSet()->count(), 20);  // bins, not 2,000 bars
  // Nothing on the chart per node: what a 10,000-node job costs to draw is what this one does.
  EXPECT_LT(page.chartView()->scene()->items().size(), 300);
  double total = 0;
  for (int b = 0; b < page.barSet()->count(); ++b) total += page.barSet()->at(b);
  EXPECT_EQ(total, 2000);
  // Outliers named worst first, with their values, in the caption and the list.
  const QString caption = page.caption();
  EXPECT_TRUE(caption.contains(QStringLiteral("2,000 of 2,000 node(s)"))) << caption.toStdString();
  EXPECT_TRUE(caption.contains(QStringLiteral("3 outlier(s)")));
  EXPECT_TRUE(caption.contains(QStringLiteral(
      "gpu-h100-r07-n0042 (97.5 GB/s), gpu-h100-r07-n1234 (121.0 GB/s), gpu-h100-r07-n1999 "
      "(250.0 GB/s)")))
      << caption.toStdString();
  ASSERT_EQ(page.outlierList()->count(), 3);
  EXPECT_EQ(page.outlierList()->item(0)->data(Qt::UserRole).toInt(), worst);
  // The bins of the outliers are red, and a click on one selects its outlier.
  QList<int> red = page.barSet()->selectedBars();
  std::sort(red.begin(), red.end());  // the lowest bin holds the slowest node
  ASSERT_EQ(red.size(), 3);
  QSignalSpy selected(&page, &ChartsPage::nodeSelected);
  emit page.barSet()->clicked(red.front());
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected.last().at(0).toInt(), worst);
  EXPECT_TRUE(
      page.barToolTip(red.front()).contains(QStringLiteral("gpu-h100-r07-n0042 (97.5 GB/s)")));
  // The name on the chart is clickable too (a bin of one node among 2,000 is a sliver).
  QGraphicsSimpleTextItem* name = nullptr;
  for (QGraphicsItem* item : page.chartView()->chart()->childItems()) {
    auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item);
    if (text != nullptr && text->text().contains(QStringLiteral("n0042"))) name = text;
  }
  ASSERT_NE(name, nullptr);
  selected.clear();
  const QPointF center = name->mapToScene(name->boundingRect().center());
  QTest::mouseClick(page.chartView()->viewport(), Qt::LeftButton, {},
                    page.chartView()->mapFromScene(center));
  ASSERT_EQ(selected.count(), 1);
  EXPECT_EQ(selected.last().at(0).toInt(), worst);
}

}  // namespace
}  // namespace ibc::console
