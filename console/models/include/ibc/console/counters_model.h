#pragma once

// The node page's counters of one port (console/README.md `node`): every counter the snapshot holds
// (counters, counters_ext, hw_counters, then the device's hw_counters) with its total, its
// window delta and rate per second when the snapshot has a window, and the reason when it
// could not be read. Numbers sort as numbers (SortRole).
//
// Rows come trouble first: error counters (core's classifyCounter: anything but traffic and
// configuration) that moved during the window, then error counters with a non-zero total,
// then the rest, then the unavailable ones; by name within each.

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QString>
#include <optional>
#include <vector>

#include "ibc/console/filter_terms.h"
#include "ibc/console/job_data.h"

namespace ibc::console {

class CountersModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Group, Total, Delta, RatePerSecond, Unavailable, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1, RawValueRole, ConcernRole };
  // ConcernRole: how much a row asks for attention, the order of the rows.
  enum Concern { Moved = 0, NonZeroError = 1, Quiet = 2, Unreadable = 3 };

  explicit CountersModel(QObject* parent = nullptr);
  // Shows `device` `port` of `snapshot`, a whole one (readFullSnapshot: the job keeps its
  // snapshots without counters); nullptr or not found: empty.
  void setPort(const ::ibcollect::v1::Snapshot* snapshot, const QString& device, int port);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString name;
    QString group;
    std::optional<quint64> total;
    std::optional<qint64> delta;
    std::optional<double> rate;
    QString unavailable;
    Concern concern = Quiet;
    QString meaning;  // core's class of the counter ("" for traffic and configuration)
  };
  std::vector<Row> rows_;
};

// The node page's counters, sorted and filtered (filter_terms.h): a counter-name glob
// (symbol*), group=hw_counters, total>0, delta>0, rate>=1. A term that cannot be read shows
// nothing (filterError says why).
class CountersFilter : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit CountersFilter(QObject* parent = nullptr);
  void setFilterText(const QString& text);
  QString filterError() const { return error_; }

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  std::vector<FilterTerm> terms_;
  QString error_;
};

}  // namespace ibc::console
