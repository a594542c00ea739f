#pragma once

// The findings page (DESIGN §7 `findings`), like Wireshark's expert information: findings
// grouped by severity and code, worst first (at equal severity the more specific code
// first, as the CLI's WORST FINDING), each group's children the findings with their node
// and port. Selecting a child tells the other pages which node and port to show.

#include <QAbstractItemModel>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

class FindingsModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column { Summary, Node, Where, Count, ColumnCount };
  enum Role {
    SeverityRole = Qt::UserRole + 1,  // 1 info, 2 warning, 3 critical
    CodeRole,
    NodeIndexRole,     // children: index into report.nodes(), -1 when unknown
    DeviceRole,        // children
    PortRole,          // children
    FindingIndexRole,  // children: index into report.findings()
  };

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
  // Where a job opens (worst first): the first finding of the most severe group (groups are
  // worst and most specific first) that belongs to a node; invalid when there is none.
  QModelIndex worstFinding() const;

 private:
  struct Group {
    int severity = 0;
    QString code;
    std::vector<int> findings;  // indexes into report.findings()
  };
  void rebuild();
  int nodeOf(int finding) const;

  const JobData* job_ = nullptr;
  std::vector<Group> groups_;
};

}  // namespace ibc::console
