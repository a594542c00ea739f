// diff_model.h: a node against the job's majority and two nodes against each other, only
// what differs, with a direction; counters in their units; facts matched by key.

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <algorithm>
#include <map>
#include <set>

#include "console_fixtures.h"
#include "ibc/console/diff_model.h"
#include "ibc/console/job_data.h"

namespace ibc::console {
namespace {

struct DiffRow {
  QString section, field, left, right;
  DiffModel::Direction direction;
  QString change;
};

std::vector<DiffRow> rowsOf(const DiffModel& m) {
  std::vector<DiffRow> out;
  for (int r = 0; r < m.rowCount(); ++r) {
    out.push_back(
        {m.index(r, DiffModel::Section).data().toString(),
         m.index(r, DiffModel::Field).data().toString(),
         m.index(r, DiffModel::Left).data().toString(),
         m.index(r, DiffModel::Right).data().toString(),
         static_cast<DiffModel::Direction>(m.index(r, 0).data(DiffModel::DirectionRole).toInt()),
         m.index(r, DiffModel::Change).data().toString()});
  }
  return out;
}

TEST(DiffModel, TheStuckNodeAgainstTheMajorityShowsItsInitPortsAndFindingsAsWorse) {
  const JobData& j = job();
  const int stuck = nodeLabelled(j, "node1661");
  ASSERT_GE(stuck, 0);
  DiffModel m;
  QAbstractItemModelTester tester(&m, kFatal);
  m.compareWithMajority(&j, stuck);
  const auto rows = rowsOf(m);
  int init_ports = 0;
  bool saw_finding = false;
  for (const auto& r : rows) {
    if (r.field == "state" && r.left == "INIT") {
      ++init_ports;
      EXPECT_EQ(r.right, "ACTIVE");
      EXPECT_EQ(r.direction, DiffModel::Direction::Worse);
    }
    if (r.section == "findings" && r.field.startsWith("PORT_NOT_ACTIVE_SM")) {
      saw_finding = true;
      EXPECT_EQ(r.direction, DiffModel::Direction::Worse);
    }
    // Only differences: no row whose two sides read the same.
    EXPECT_NE(r.left, r.right) << r.section.toStdString() << " " << r.field.toStdString();
  }
  EXPECT_EQ(init_ports, 2);  // the capture's two ports stuck in INIT
  EXPECT_TRUE(saw_finding);
  EXPECT_EQ(m.worseCount(), static_cast<int>(std::count_if(rows.begin(), rows.end(), [](auto& r) {
              return r.direction == DiffModel::Direction::Worse;
            })));
  // Worst first: the first row is worse.
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().direction, DiffModel::Direction::Worse);
}

TEST(DiffModel, TwoNodesDifferBothWaysAndANodeDoesNotDifferFromItself) {
  const JobData& j = job();
  const int stuck = nodeLabelled(j, "node1661");
  const int good = nodeLabelled(j, "node1720 (gpu01.ibsnap)");
  ASSERT_GE(stuck, 0);
  ASSERT_GE(good, 0);
  DiffModel m;
  QAbstractItemModelTester tester(&m, kFatal);
  m.compareNodes(&j, good, good);
  EXPECT_EQ(m.rowCount(), 0);
  m.compareNodes(&j, stuck, good);
  const int worse = m.worseCount();
  EXPECT_GT(worse, 0);
  EXPECT_EQ(m.headerData(DiffModel::Left, Qt::Horizontal).toString(), "node1661");
  m.compareNodes(&j, good, stuck);
  int better = 0;
  for (const auto& r : rowsOf(m)) better += r.direction == DiffModel::Direction::Better ? 1 : 0;
  EXPECT_EQ(better, worse);  // the same differences, seen from the other side
  m.compareNodes(&j, good, 99);
  EXPECT_EQ(m.rowCount(), 0);
}

TEST(DiffModel, AnErrorCounterThatGrewIsWorseAndTrafficOnlyChanged) {
  // The real mlx5 capture, and the same snapshot read again later with more errors and
  // more traffic (synthetic values, in memory): only the counters that moved are listed.
  const v1::Snapshot before = mlx5Snapshot();
  v1::Snapshot after = before;
  after.mutable_node()->set_collected_at_unix_ms(before.node().collected_at_unix_ms() + 60000);
  for (auto& c : *after.mutable_devices(0)->mutable_ports(0)->mutable_hw_counters()) {
    if (c.name() == "resp_cqe_error") c.set_value(c.value() + 5);
  }
  for (auto& c : *after.mutable_devices(0)->mutable_ports(0)->mutable_counters()) {
    if (c.name() == "port_xmit_data") c.set_value(c.value() + 1000);
  }
  const JobData j = diagnoseSnapshots({after, before}, {"after.ibsnap", "before.ibsnap"});
  DiffModel m;
  m.compareNodes(&j, 0, 1);
  std::map<QString, DiffRow> by_field;
  for (const auto& r : rowsOf(m)) by_field.emplace(r.field, r);
  ASSERT_TRUE(by_field.count("resp_cqe_error"));
  EXPECT_EQ(by_field.at("resp_cqe_error").left, "8,114");
  EXPECT_EQ(by_field.at("resp_cqe_error").right, "8,109");
  EXPECT_EQ(by_field.at("resp_cqe_error").change, "+5");
  EXPECT_EQ(by_field.at("resp_cqe_error").direction, DiffModel::Direction::Worse);
  ASSERT_TRUE(by_field.count("port_xmit_data"));
  EXPECT_EQ(by_field.at("port_xmit_data").direction, DiffModel::Direction::Changed);
  // 4-byte words shown as bytes: 1,000 more words are 3.91 KiB more.
  EXPECT_EQ(by_field.at("port_xmit_data").change, "+3.91 KiB");
  EXPECT_TRUE(by_field.at("port_xmit_data").left.endsWith("iB"))
      << by_field.at("port_xmit_data").left.toStdString();
  EXPECT_FALSE(by_field.count("symbol_error"));  // did not move
}

// Facts are matched position by position while two nodes share a layout and by key after:
// a node with one more device, listed first, differs in that device and nothing else, against
// the other node and against the job's majority (SYNTHETIC: the real mlx5 capture with a
// copy of its device renamed, in memory).
TEST(DiffModel, ANodeWithAnExtraDeviceFirstDiffersInThatDeviceOnly) {
  const v1::Snapshot plain = mlx5Snapshot();
  v1::Snapshot extra = plain;
  auto* copy = extra.add_devices();
  *copy = plain.devices(0);
  copy->set_name("mlx5_9");
  for (int i = extra.devices_size() - 1; i > 0; --i)
    extra.mutable_devices()->SwapElements(i, i - 1);
  const JobData j =
      diagnoseSnapshots({extra, plain, plain}, {"extra.ibsnap", "a.ibsnap", "b.ibsnap"});
  DiffModel m;
  const auto onlyTheExtraDevice = [&](DiffModel::Direction expected) {
    int extra_rows = 0;
    for (const auto& r : rowsOf(m)) {
      if (r.section == "findings" || r.section == "host") continue;
      EXPECT_TRUE(r.section.startsWith("mlx5_9/"))
          << r.section.toStdString() << " " << r.field.toStdString();
      EXPECT_EQ(r.direction, expected) << r.field.toStdString();
      ++extra_rows;
    }
    EXPECT_GT(extra_rows, 10);
  };
  m.compareNodes(&j, 0, 1);
  onlyTheExtraDevice(DiffModel::Direction::OnlyLeft);
  m.compareNodes(&j, 1, 0);
  onlyTheExtraDevice(DiffModel::Direction::OnlyRight);
  m.compareWithMajority(&j, 0);
  onlyTheExtraDevice(DiffModel::Direction::OnlyLeft);
  m.compareWithMajority(&j, 1);
  for (const auto& r : rowsOf(m)) {
    EXPECT_FALSE(r.section.startsWith("mlx5_")) << r.section.toStdString();
  }
  // The majority holds each key once (the first node's layout, then what others add).
  const auto majority = majorityFacts(j);
  EXPECT_EQ(majority.voters, 3);
  EXPECT_EQ(majority.unread, 0);
  std::set<std::pair<QString, QString>> keys;
  for (const auto& f : majority.facts) EXPECT_TRUE(keys.emplace(f.section, f.field).second);
  const auto second = factsOf(j, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(majority.facts.size(), second->size());
}

}  // namespace
}  // namespace ibc::console
