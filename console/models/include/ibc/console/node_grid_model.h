#pragma once

// The grid page's table (DESIGN §7 `grid`): one row per node and port (a node without
// ports, or unreachable, is one row), built from core's Report so every verdict is the
// CLI's. Cells that differ from the job's majority are outliers (OutlierRole): the row of
// the odd node stands out in a 2,000-node job.

#include <QAbstractTableModel>
#include <QString>
#include <optional>
#include <vector>

#include "ibc/console/job_data.h"

namespace ibc::console {

class NodeGridModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    Node,
    Device,
    Port,
    State,
    PhysState,
    Rate,
    LinkLayer,
    Firmware,
    Function,
    Findings,
    Verdict,
    WorstFinding,
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole + 1,  // numbers for numeric columns, severity rank for Verdict
    SeverityRole,                 // 0 ok, 1 info, 2 warning, 3 critical (the row's port)
    RawValueRole,                 // the value as core reported it
    OutlierRole,                  // bool: differs from the job's majority in this column
    NodeIndexRole,                // index into JobData::report.nodes()
    CodesRole,                    // QStringList: finding codes on this row's node and port
  };

  explicit NodeGridModel(QObject* parent = nullptr);

  void setJob(const JobData* job);  // not owned; nullptr clears
  const JobData* job() const { return job_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // The row of a node (its first port) and of a node's port; -1 when absent.
  int rowOf(int node_index, const QString& device = {}, int port = 0) const;
  // The job's majority value of a column ("" when there is none, e.g. every row differs).
  QString majority(Column column) const;
  // A counter of the row's port by name (counters, counters_ext, hw_counters, then the
  // device's hw_counters): its window delta when the snapshot has a window, else its total.
  // nullopt when the port has no such counter or it was unavailable.
  std::optional<double> counter(int row, const QString& name) const;
  int outlierRows() const { return outlier_rows_; }

 private:
  struct Row {
    int node = 0;
    int port = -1;  // index into the node's ports, -1 for a node-only row
    QString cells[ColumnCount];
    QVariant sort[ColumnCount];
    int severity = 0;
    QStringList codes;
    bool outlier[ColumnCount] = {};
  };
  void rebuild();

  const JobData* job_ = nullptr;
  std::vector<Row> rows_;
  QString majority_[ColumnCount];
  int outlier_rows_ = 0;
};

}  // namespace ibc::console
