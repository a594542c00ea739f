#pragma once

// The grid page's table (console/README.md `grid`): one row per node and port (a node without
// ports, or unreachable, is one row), built from core's Report so every verdict is the
// CLI's. Cells that differ from the job's majority are outliers (OutlierRole): the row of
// the odd node stands out in a 2,000-node job.
//
// Everything a view, a sort or a filter asks for is computed once in setJob(): cell text,
// numeric sort keys (strings get their rank in natural order, so no collation happens while
// sorting), finding codes and every counter's amount. data() and the accessors below only
// index arrays: a 10,000-row job sorts and filters without allocating per call.

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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
    Mtu,
    Firmware,
    Function,
    // Key counters of the port: per second over the snapshot's window when it has one,
    // else the total since the counters were last reset (the cell says which: "0.4/s").
    SymbolErrors,
    LinkDowned,
    RcvErrors,
    XmitDiscards,
    XmitWait,
    Busbw,  // the node's peak nccl-tests bus bandwidth, GB/s (empty without nccl-tests)
    Findings,
    Verdict,
    WorstFinding,
    // Who signed the node's snapshot and whether that is the node (the collector's rule):
    // "node07", "UNSIGNED", "alice: NOT the node".
    Signer,
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
  // The counter behind each key-counter column ("" for other columns).
  static const char* counterOfColumn(int column);

  explicit NodeGridModel(QObject* parent = nullptr);

  void setJob(const JobData* job);  // not owned; nullptr clears

 private:
  struct Row;

 public:
  // Everything setJob computes, computed apart: a loader builds it on its worker thread
  // (plain data, no QObject) and the GUI thread only swaps it in.
  struct Prepared {
    std::vector<Row> rows;
    // Every distinct cell text and code list once; rows hold their ids (a 2,000-node job's
    // 16,000 rows repeat "ACTIVE", a node's name on each of its ports, the same codes). Id 0 is
    // the empty text and the empty list.
    std::vector<QString> texts{QString()};
    std::vector<QStringList> code_lists{QStringList()};
    QString majority[ColumnCount];
    int outlier_rows = 0;
    bool has_window = false;
    bool empty_column[ColumnCount] = {};
    // Per column, the row with the longest text in the plain and in the bold (outlier) font;
    // -1 when there is none.
    std::array<int, 2> widest_rows[ColumnCount];
    Prepared() {
      for (auto& w : widest_rows) w = {-1, -1};
    }
  };
  static Prepared prepare(const JobData* job);
  // Swaps `prepared` in and returns what it replaced, so a caller can free a large job's
  // rows off the GUI thread.
  Prepared setJob(const JobData* job, Prepared prepared);
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
  // nullopt when the port has no such counter, it was unavailable, or (with a window) it
  // was not read twice or went backwards.
  std::optional<double> counter(int row, const QString& name) const;
  int outlierRows() const { return outlier_rows_; }
  // True when some snapshot sampled a window: counter columns are rates, not totals.
  bool hasWindow() const { return has_window_; }
  // True when no row has a value in `column` (e.g. counters the captures did not hold): the
  // page hides it rather than show an empty column.
  bool columnIsEmpty(int column) const { return empty_column_[column]; }
  // The rows holding a column's longest text over every row, plain and bold (-1: none): a
  // view sizes the column from these two cells instead of measuring thousands.
  std::array<int, 2> widestRows(int column) const { return widest_rows_[column]; }

  // For the filter proxy (no QVariant, no allocation): the row's numeric sort key of a
  // column (NaN when the cell is empty), severity rank and finding codes.
  double sortKey(int row, int column) const { return rows_[std::size_t(row)].sort[column]; }
  int severity(int row) const { return rows_[std::size_t(row)].severity; }
  const QStringList& codes(int row) const { return code_lists_[rows_[std::size_t(row)].codes]; }
  const QString& nodeName(int row) const { return cell(rows_[std::size_t(row)], Node); }
  // The id of a counter name for counter(row, id); -1 when no row has it.
  int counterId(std::string_view name) const;
  std::optional<double> counter(int row, int counter_id) const;

 private:
  using TextId = std::uint32_t;  // into Prepared::texts (0: empty)
  struct Row {
    int node = 0;
    int port = -1;  // index into the node's ports, -1 for a node-only row
    TextId cells[ColumnCount] = {};
    double sort[ColumnCount];
    int severity = 0;
    bool trusted = false;  // signed by the node's own certificate
    TextId codes = 0;      // into Prepared::code_lists
    bool outlier[ColumnCount] = {};
    // The port's counters as the job keeps them (JobData::counters; not owned): ids of the
    // job's counter_names, window deltas when there are some, else totals. Null without any.
    const NodeCounters::Port* counters = nullptr;
  };
  // prepare()'s steps. KeyIds: the counter id of each key counter column.
  using KeyIds = std::array<int, 5>;
  // What prepare() keeps while it interns texts and code lists: their ids.
  struct Interned {
    std::unordered_map<QString, TextId> texts;
    std::map<QStringList, TextId> code_lists;
  };
  static void addNodeRows(Prepared& out, Interned& ids, const JobData& job, int i,
                          const KeyIds& key_ids);
  // What a snapshot holds of one port, looked up once per node (a node may have thousands).
  struct PortSources {
    const ::ibcollect::v1::RdmaPort* port = nullptr;
    const NodeCounters::Port* counters = nullptr;  // the job's kept counters of the port
    std::optional<uint32_t> netdev_mtu;
  };
  // A snapshot's ports (device, port) with their kept counters and netdev MTUs.
  static std::map<std::pair<std::string, uint32_t>, PortSources> portSourcesOf(
      const ::ibcollect::v1::Snapshot& snap, const NodeCounters* counters);
  static void addPortCounters(Prepared& out, Interned& ids, Row& r, const PortSources& sources,
                              double interval, const KeyIds& key_ids);
  static TextId intern(Prepared& out, Interned& ids, const QString& text);
  static TextId internCodes(Prepared& out, Interned& ids, const QStringList& codes);
  const QString& cell(const Row& r, int column) const { return texts_[r.cells[column]]; }
  static void judgeColumns(Prepared& out, const JobData& job, const KeyIds& key_ids);
  static void indexColumns(Prepared& out);

  const JobData* job_ = nullptr;
  std::vector<Row> rows_;
  std::vector<QString> texts_{QString()};
  std::vector<QStringList> code_lists_{QStringList()};
  QString majority_[ColumnCount];
  int outlier_rows_ = 0;
  bool has_window_ = false;
  bool empty_column_[ColumnCount] = {};
  std::array<int, 2> widest_rows_[ColumnCount] = {};
};

}  // namespace ibc::console
