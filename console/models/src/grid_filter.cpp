#include "ibc/console/grid_filter.h"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"

namespace ibc::console {

namespace {

int severityFromWord(const QString& w) {
  const QString s = w.toLower();
  if (s == QLatin1String("critical")) return 3;
  if (s == QLatin1String("warning")) return 2;
  if (s == QLatin1String("info")) return 1;
  if (s == QLatin1String("ok")) return 0;
  return -1;
}

}  // namespace

GridFilter::GridFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(NodeGridModel::SortRole);
  setSortCaseSensitivity(Qt::CaseInsensitive);
}

void GridFilter::setGridModel(NodeGridModel* model) {
  grid_ = model;
  setSourceModel(model);
  connect(model, &QAbstractItemModel::modelReset, this, [this] {
    resolveCounters();
    recomputeTop();
  });
  recomputeTop();
}

void GridFilter::setFilterText(const QString& text) {
  terms_.clear();
  error_.clear();
  static const QRegularExpression kSeverity(
      QStringLiteral("^(?:severity|sev)(>=|=)(critical|warning|info|ok)$"),
      QRegularExpression::CaseInsensitiveOption);
  static const QRegularExpression kCode(QStringLiteral("^code=([A-Za-z0-9_]+)$"));
  static const QRegularExpression kCounter(
      QStringLiteral("^([a-z][a-z0-9_]*)>(\\d+(?:\\.\\d+)?)$"));
  for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
    if (auto m = kSeverity.match(word); m.hasMatch()) {
      Term t{Term::Kind::MinSeverity, m.captured(1), 0, {}, -1};
      t.number = severityFromWord(m.captured(2));
      terms_.push_back(t);
    } else if (auto c = kCode.match(word); c.hasMatch()) {
      terms_.push_back({Term::Kind::Code, c.captured(1).toUpper(), 0, {}, -1});
    } else if (auto n = kCounter.match(word); n.hasMatch()) {
      terms_.push_back({Term::Kind::CounterAbove, n.captured(1), n.captured(2).toDouble(), {}, -1});
    } else if (word.contains(QLatin1Char('=')) || word.contains(QLatin1Char('>')) ||
               word.contains(QLatin1Char('<'))) {
      error_ = tr("cannot read \"%1\": use severity>=warning, code=CODE, counter>N or a node "
                  "glob")
                   .arg(word);
    } else {
      Term t{Term::Kind::NodeGlob, word, 0, {}, -1};
      t.glob = QRegularExpression(QRegularExpression::wildcardToRegularExpression(word),
                                  QRegularExpression::CaseInsensitiveOption);
      terms_.push_back(t);
    }
  }
  resolveCounters();
  invalidateFilter();
}

void GridFilter::resolveCounters() {
  for (Term& t : terms_) {
    if (t.kind == Term::Kind::CounterAbove)
      t.counter_id = grid_ != nullptr ? grid_->counterId(t.text.toStdString()) : -1;
  }
}

void GridFilter::setTopCounter(const QString& counter, int count) {
  top_counter_ = counter;
  top_count_ = count;
  recomputeTop();
  invalidateFilter();
}

void GridFilter::recomputeTop() {
  in_top_.clear();
  if (grid_ == nullptr || top_counter_.isEmpty() || top_count_ <= 0) return;
  std::vector<std::pair<double, int>> values;
  const int id = grid_->counterId(top_counter_.toStdString());
  for (int r = 0; r < grid_->rowCount(); ++r) {
    if (auto v = grid_->counter(r, id)) values.push_back({*v, r});
  }
  std::stable_sort(values.begin(), values.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  in_top_.assign(static_cast<std::size_t>(grid_->rowCount()), false);
  for (std::size_t i = 0; i < values.size() && i < static_cast<std::size_t>(top_count_); ++i)
    in_top_[static_cast<std::size_t>(values[i].second)] = true;
}

bool GridFilter::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (grid_ == nullptr || source_parent.isValid()) return true;
  if (!error_.isEmpty()) return false;
  if (!top_counter_.isEmpty() && top_count_ > 0) {
    if (static_cast<std::size_t>(source_row) >= in_top_.size() ||
        !in_top_[static_cast<std::size_t>(source_row)])
      return false;
  }
  for (const Term& t : terms_) {
    switch (t.kind) {
      case Term::Kind::NodeGlob:
        if (!t.glob.match(grid_->nodeName(source_row)).hasMatch()) return false;
        break;
      case Term::Kind::MinSeverity: {
        const int s = grid_->severity(source_row);
        if (t.text == QLatin1String("=") ? s != static_cast<int>(t.number)
                                         : s < static_cast<int>(t.number))
          return false;
        break;
      }
      case Term::Kind::Code:
        if (!grid_->codes(source_row).contains(t.text)) return false;
        break;
      case Term::Kind::CounterAbove: {
        const auto v = grid_->counter(source_row, t.counter_id);
        if (!v || *v <= t.number) return false;
        break;
      }
    }
  }
  return true;
}

bool GridFilter::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  if (grid_ == nullptr) return QSortFilterProxyModel::lessThan(left, right);
  // Precomputed numeric keys (text columns hold their natural-order rank). An empty cell
  // sorts after every value, whichever the direction the view asks for.
  const double l = grid_->sortKey(left.row(), left.column());
  const double r = grid_->sortKey(right.row(), right.column());
  if (std::isnan(l) || std::isnan(r)) {
    if (std::isnan(l) == std::isnan(r)) return false;
    return sortOrder() == Qt::AscendingOrder ? std::isnan(r) : std::isnan(l);
  }
  return l < r;
}

}  // namespace ibc::console
