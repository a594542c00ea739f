#pragma once

// The findings page (console/README.md `findings`), like Wireshark's expert information: findings
// grouped by severity and code, worst first (at equal severity the more specific code
// first, as the CLI's WORST FINDING); under each group one row per node that has the code
// (in report order), and under a node one row per finding when it has the code in more
// than one place (ports). A node with one finding of the code is a leaf. Groups say how many
// nodes and findings they hold, so a code on 2,000 nodes is one line until opened.
// Selecting a node or port row tells the other pages which node and port to show.

#include <QAbstractItemModel>
#include <QSortFilterProxyModel>
#include <QString>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

class FindingsModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column { Summary, Node, Where, Count, ColumnCount };
  enum Role {
    SeverityRole = Qt::UserRole + 1,  // 1 info, 2 warning, 3 critical (every row)
    CodeRole,                         // every row
    // Node and port rows (a node row: its first finding of the group); group rows -1, "", 0.
    NodeIndexRole,  // index into report.nodes(), -1 when unknown
    DeviceRole,
    PortRole,
    FindingIndexRole,  // index into report.findings() (a group row: its first finding)
    LevelRole,         // a Level
  };
  enum Level { GroupLevel, NodeLevel, PortLevel };

  explicit FindingsModel(QObject* parent = nullptr);
  void setJob(const JobData* job);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  int groupCount() const { return static_cast<int>(groups_.size()); }
  // Where a job opens (worst first): the first node row of the most severe group (groups are
  // worst and most specific first) that belongs to a node; invalid when there is none.
  QModelIndex worstFinding() const;
  // Node `node`'s row in the first group that has it; there, the port row of `device` and
  // `port` when that port is not the node row's own (first) finding. Invalid when the node
  // has no finding.
  QModelIndex indexOfNode(int node, const QString& device, int port) const;
  // The findings a row stands for (indexes into report.findings()): a group's, a node row's
  // in its group, a port row's one.
  std::vector<int> findingsOf(const QModelIndex& index) const;
  // A row's findings as plain text for the clipboard, each with its severity, code, node,
  // where, message, evidence lines, next step and source; "" for an invalid index.
  QString copyText(const QModelIndex& index) const;
  // The node's name (as its snapshot names it, for a shell or a ticket) of a node or port
  // row; "" for a group row or a finding of no node.
  QString nodeName(const QModelIndex& index) const;

  // Which rows a filter keeps (filter_terms.h): a word or node= over the node's name and
  // label, code=, severity>= (by rank), device= (the node row's or any of its ports'). A
  // group shows when it holds and one of its nodes does. A term that cannot be read keeps
  // nothing and is the error.
  struct RowFilter {
    QString error;
    std::vector<bool> groups;              // per group row
    std::vector<std::vector<bool>> nodes;  // per group, per node row
  };
  RowFilter filterRows(const QString& text) const;

 private:
  struct NodeRow {
    int group = 0;
    int node = -1;              // index into report.nodes(), -1 when unknown
    std::vector<int> findings;  // indexes into report.findings(), report order
  };
  struct Group {
    int severity = 0;
    QString code;
    std::vector<int> findings;  // indexes into report.findings(), report order
    int first_row = 0;          // its first NodeRow in node_rows_
    int rows = 0;               // how many NodeRows, in node_rows_ order
  };
  // Which row an index is; its internalId says: 0 a group, 1..groups a node row of group
  // id - 1, above that a port row of node_rows_[id - groups - 1].
  struct RowPlace {
    Level level = GroupLevel;
    int group = -1;
    int node_row = -1;  // index into node_rows_ (node and port rows)
    int finding = -1;   // index into report.findings()
  };
  RowPlace locate(const QModelIndex& index) const;
  void rebuild();
  QString nodeLabel(int finding) const;
  QString whereOf(int finding) const;

  const JobData* job_ = nullptr;
  std::vector<Group> groups_;
  std::vector<NodeRow> node_rows_;
};

// The findings page's filter (filter_terms.h), as FindingsModel::filterRows decides: node
// rows that hold are kept with their ports, and their groups; nothing else.
class FindingsFilter : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit FindingsFilter(QObject* parent = nullptr);
  void setFindingsModel(FindingsModel* model);
  void setFilterText(const QString& text);
  QString filterError() const { return keep_.error; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  void recompute();

  FindingsModel* findings_ = nullptr;
  QString text_;
  FindingsModel::RowFilter keep_;
};

}  // namespace ibc::console
