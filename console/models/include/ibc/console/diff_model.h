#pragma once

// The diff page's table (console/README.md `diff`): two snapshots side by side, or one node against
// the job's majority, showing only what differs. Each snapshot is flattened into facts
// (port state, rate, link layer, firmware, MTU, every counter, every finding code, host
// facts) keyed by where they hold ("mlx5_0/1 state"); a row is a key whose values differ,
// coloured by direction: worse (an error counter grew, a port left ACTIVE, a finding
// appeared), better, or only changed (traffic, versions).

#include <QAbstractTableModel>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

// One comparable value of a snapshot. `number` is set for counters (delta over the window
// when the snapshot has one, else the total) and rates; `rank` orders states and severities
// (higher is healthier) so a change has a direction.
struct Fact {
  QString section;  // "mlx5_0/1", "host", "findings"
  QString field;    // "state", "symbol_error", "PORT_DOWN on mlx5_0/1"
  // As shown; empty for a counter with a number, which is formatted only when a row shows
  // it (shownValue): a node may have a million counter facts and few differ.
  QString value;
  std::optional<double> number;
  std::optional<int> rank;
  // For numbers: -1 when more is worse (error counters), +1 when more is better (rate,
  // busbw), 0 when neither (traffic).
  int more_is = 0;
  // For a counter: its name, so that values and changes are shown in its unit (units.h).
  std::string counter;
  // For other numbers: their unit (" GB/s", " Gb/s"), shown after the value and the change,
  // which have one decimal.
  QString unit;
};

// What a fact shows: its value, or its number in its counter's unit.
QString shownValue(const Fact& fact);

// Every fact of node `node_index` of `job`, in a stable order, from its whole snapshot
// (`whole`, or read again: readFullSnapshot; an error says why it could not be).
std::vector<Fact> factsOf(const JobData& job, int node_index,
                          const ::ibcollect::v1::Snapshot& whole);
core::Result<std::vector<Fact>> factsOf(const JobData& job, int node_index);

// The job's majority per fact: the value most nodes have (the median for numbers), for facts
// more than half the nodes have. Each node's snapshot is read again, one at a time (a worker
// computes it for a large job: ~1 s at 2,000 nodes); nodes whose snapshot cannot be read do
// not vote, and the result says so.
struct Majority {
  std::vector<Fact> facts;
  int voters = 0;           // the nodes that voted
  int unread = 0;           // the nodes whose snapshot could not be read again
  std::string first_error;  // why the first of those could not be
};
Majority majorityFacts(const JobData& job);

class DiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Section, Field, Left, Right, Change, ColumnCount };
  enum class Direction { Worse, Better, Changed, OnlyLeft, OnlyRight };
  enum Role {
    DirectionRole = Qt::UserRole + 1,  // int(Direction), seen from the left side
    SortRole,
  };

  explicit DiffModel(QObject* parent = nullptr);

  // Left against right (two nodes of the job). Clears when an index is out of range.
  void compareNodes(const JobData* job, int left, int right);
  // Node against the job's majority: per fact, the value most nodes have (the median for
  // numbers); facts most nodes have and this one lacks are listed too.
  void compareWithMajority(const JobData* job, int node);
  // The same against a majority computed before (majorityFacts).
  void compareWithMajority(const JobData* job, int node, const Majority& majority);
  void clear();
  // Why the last comparison shows nothing: a side's snapshot could not be read again (its file
  // gone or changed); "" otherwise.
  QString error() const { return error_; }

  QString leftName() const { return left_name_; }
  QString rightName() const { return right_name_; }
  // Rows whose direction is Worse (left is worse than right).
  int worseCount() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // One row: a key whose values differ, or that one side lacks.
  struct Row {
    QString section, field, left, right, change;
    Direction direction = Direction::Changed;
  };

 private:
  void setRows(std::vector<Row> rows, QString left_name, QString right_name);
  static std::vector<Row> diff(const std::vector<Fact>& left, const std::vector<Fact>& right,
                               bool right_is_majority);

  std::vector<Row> rows_;
  QString left_name_, right_name_;
  QString error_;
};

QString directionName(DiffModel::Direction direction);

}  // namespace ibc::console
