#pragma once

// The grid page's filter box and top-X (console/README.md): a QSortFilterProxyModel over
// NodeGridModel. Filter text is space-separated terms, all of which must hold:
//   node[1-3]* / gpu0?      a node-name glob (case-insensitive)
//   severity>=warning       the row's verdict at least this severe (also sev>=, =)
//   code=NODE_OUTLIER       the row's node/port has this finding code
//   symbol_error>10         a counter (window delta when there is a window, else total) above N
//   state!=ACTIVE rate<200  any column by its key (node, device, port, state, phys, rate, link,
//   mtu>=4096 fw=20.31.1014 mtu, fw, vf, busbw, findings, verdict, worst, signer) or any counter,
//                           with
//   worst="NODE OUTLIER"    = != < <= > >=; numbers compare as numbers (rate in Gb/s, busbw in
//                           GB/s), words case-insensitively (state=active matches "4: ACTIVE");
//                           a value with spaces goes in double quotes
// A term that cannot be read is reported by filterError() and matches nothing, so a typo
// never silently shows every row.

#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QString>
#include <optional>
#include <vector>

#include "ibc/console/filter_terms.h"

namespace ibc::console {

class NodeGridModel;

class GridFilter : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit GridFilter(QObject* parent = nullptr);

  void setGridModel(NodeGridModel* model);
  void setFilterText(const QString& text);
  QString filterError() const { return error_; }
  // Only the `count` rows with the largest value of `counter` (0 or empty: no top-X).
  void setTopCounter(const QString& counter, int count);
  // The term that keeps rows whose `column` (NodeGridModel::Column) shows `value` (or, with
  // `negate`, hides them): what a context menu's "filter by this value" adds. "" when the
  // column has no key.
  static QString clauseFor(int column, const QString& value, bool negate = false);
  // The filter key of a column ("state"), "" when it has none.
  static QString keyOf(int column);

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  struct Term {
    enum class Kind { NodeGlob, MinSeverity, Code, CounterAbove, Column } kind;
    QString text;
    double number = 0;
    QRegularExpression glob;  // NodeGlob, compiled once
    int counter_id = -1;      // CounterAbove/Column on a counter: NodeGridModel::counterId
    int column = -1;          // Column: NodeGridModel::Column, or -1 for a counter by name
    FilterTerm filter;        // the term as read (filter_terms.h)
  };
  bool holds(const Term& t, int row) const;
  void recomputeTop();
  void resolveCounters();

  NodeGridModel* grid_ = nullptr;
  std::vector<Term> terms_;
  QString error_;
  QString top_counter_;
  int top_count_ = 0;
  std::vector<bool> in_top_;
};

}  // namespace ibc::console
