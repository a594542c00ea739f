#include "ibc/console/grid_filter.h"

#include <QCollator>
#include <QRegularExpression>
#include <algorithm>

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
  connect(model, &QAbstractItemModel::modelReset, this, [this] { recomputeTop(); });
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
      Term t{Term::Kind::MinSeverity, m.captured(1), 0};
      t.number = severityFromWord(m.captured(2));
      terms_.push_back(t);
    } else if (auto c = kCode.match(word); c.hasMatch()) {
      terms_.push_back({Term::Kind::Code, c.captured(1).toUpper(), 0});
    } else if (auto n = kCounter.match(word); n.hasMatch()) {
      terms_.push_back({Term::Kind::CounterAbove, n.captured(1), n.captured(2).toDouble()});
    } else if (word.contains(QLatin1Char('=')) || word.contains(QLatin1Char('>')) ||
               word.contains(QLatin1Char('<'))) {
      error_ = tr("cannot read \"%1\": use severity>=warning, code=CODE, counter>N or a node "
                  "glob")
                   .arg(word);
    } else {
      terms_.push_back({Term::Kind::NodeGlob, word, 0});
    }
  }
  invalidateFilter();
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
  for (int r = 0; r < grid_->rowCount(); ++r) {
    if (auto v = grid_->counter(r, top_counter_)) values.push_back({*v, r});
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
  const QModelIndex node = grid_->index(source_row, NodeGridModel::Node);
  for (const Term& t : terms_) {
    switch (t.kind) {
      case Term::Kind::NodeGlob: {
        const QRegularExpression re(QRegularExpression::wildcardToRegularExpression(t.text),
                                    QRegularExpression::CaseInsensitiveOption);
        if (!re.match(node.data().toString()).hasMatch()) return false;
        break;
      }
      case Term::Kind::MinSeverity: {
        const int s = node.data(NodeGridModel::SeverityRole).toInt();
        if (t.text == QLatin1String("=") ? s != static_cast<int>(t.number)
                                         : s < static_cast<int>(t.number))
          return false;
        break;
      }
      case Term::Kind::Code:
        if (!node.data(NodeGridModel::CodesRole).toStringList().contains(t.text)) return false;
        break;
      case Term::Kind::CounterAbove: {
        const auto v = grid_->counter(source_row, t.text);
        if (!v || *v <= t.number) return false;
        break;
      }
    }
  }
  return true;
}

bool GridFilter::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant l = left.data(NodeGridModel::SortRole);
  const QVariant r = right.data(NodeGridModel::SortRole);
  if (l.typeId() == QMetaType::QString || r.typeId() == QMetaType::QString) {
    // Node names with numbers sort as a person expects: node2 before node10.
    static const QCollator collator = [] {
      QCollator c;
      c.setNumericMode(true);
      c.setCaseSensitivity(Qt::CaseInsensitive);
      return c;
    }();
    return collator.compare(l.toString(), r.toString()) < 0;
  }
  return QVariant::compare(l, r) == QPartialOrdering::Less;
}

}  // namespace ibc::console
