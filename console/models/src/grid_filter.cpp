#include "ibc/console/grid_filter.h"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <optional>

#include "ibc/console/filter_terms.h"
#include "ibc/console/job_data.h"
#include "ibc/console/node_grid_model.h"

namespace ibc::console {

namespace {}  // namespace

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

namespace {

struct ColumnKey {
  int column;
  const char* key;
  bool numeric;
};
// Each column's filter key; counters go by their own names (symbol_error>0).
constexpr ColumnKey kColumnKeys[] = {
    {NodeGridModel::Node, "node", false},       {NodeGridModel::Device, "device", false},
    {NodeGridModel::Port, "port", true},        {NodeGridModel::State, "state", false},
    {NodeGridModel::PhysState, "phys", false},  {NodeGridModel::Rate, "rate", true},
    {NodeGridModel::LinkLayer, "link", false},  {NodeGridModel::Mtu, "mtu", true},
    {NodeGridModel::Firmware, "fw", false},     {NodeGridModel::Function, "vf", false},
    {NodeGridModel::Busbw, "busbw", true},      {NodeGridModel::Findings, "findings", true},
    {NodeGridModel::Verdict, "verdict", false}, {NodeGridModel::WorstFinding, "worst", false},
    {NodeGridModel::Signer, "signer", false},
};

const ColumnKey* columnKey(const QString& key) {
  for (const auto& c : kColumnKeys) {
    if (key.compare(QLatin1String(c.key), Qt::CaseInsensitive) == 0) return &c;
  }
  if (key.compare(QLatin1String("phys_state"), Qt::CaseInsensitive) == 0) return &kColumnKeys[4];
  if (key.compare(QLatin1String("firmware"), Qt::CaseInsensitive) == 0) return &kColumnKeys[8];
  return nullptr;
}

}  // namespace

QString GridFilter::keyOf(int column) {
  for (const auto& c : kColumnKeys) {
    if (c.column == column) return QLatin1String(c.key);
  }
  return {};
}

QString GridFilter::clauseFor(int column, const QString& value, bool negate) {
  const QString key = keyOf(column);
  if (key.isEmpty()) return {};
  const QString op = negate ? QStringLiteral("!=") : QStringLiteral("=");
  const ColumnKey* c = columnKey(key);
  if (c->numeric) {
    const auto n = leadingNumber(value);
    if (!n) return key + op + QStringLiteral("\"\"");
    return key + op + QString::number(*n);
  }
  QString v = value.trimmed();
  v.remove(QLatin1Char('"'));
  if (v.contains(QLatin1Char(' ')) || v.isEmpty()) v = QLatin1Char('"') + v + QLatin1Char('"');
  return key + op + v;
}

void GridFilter::setFilterText(const QString& text) {
  terms_.clear();
  error_.clear();
  FilterKeys keys;
  for (const auto& c : kColumnKeys) (c.numeric ? keys.numeric : keys.text) << QLatin1String(c.key);
  keys.text << QStringLiteral("code") << QStringLiteral("phys_state") << QStringLiteral("firmware");
  keys.any_numeric_key = true;  // a counter by its name: symbol_error>10
  keys.severity = true;
  ParsedFilter parsed = parseFilter(text, keys);
  error_ = parsed.error;
  for (FilterTerm& f : parsed.terms) {
    Term t{Term::Kind::Column, {}, 0, {}, -1, -1, f};
    if (f.key == QLatin1String("severity")) {
      t.kind = Term::Kind::MinSeverity;
    } else if (f.key.isEmpty()) {
      t.kind = Term::Kind::NodeGlob;
      t.glob = f.glob;
    } else if (f.key == QLatin1String("code")) {
      t.kind = Term::Kind::Code;
      t.text = f.value.toUpper();
    } else if (const ColumnKey* c = columnKey(f.key)) {
      t.column = c->column;
    } else {
      t.column = -1;  // a counter by its name
      t.text = f.key;
      if (f.op == QLatin1String(">")) {
        t.kind = Term::Kind::CounterAbove;
        t.number = *f.number;
      }
    }
    terms_.push_back(std::move(t));
  }
  resolveCounters();
  invalidateFilter();
}

void GridFilter::resolveCounters() {
  for (Term& t : terms_) {
    if (t.kind == Term::Kind::CounterAbove || (t.kind == Term::Kind::Column && t.column < 0))
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
      case Term::Kind::MinSeverity:
        if (!termHoldsNumber(t.filter, grid_->severity(source_row))) return false;
        break;
      case Term::Kind::Code: {
        // A code or a glob of codes (code=NCCL_*); code!=X hides the rows that have it.
        bool any = false;
        for (const QString& c : grid_->codes(source_row))
          any = any || c == t.text || t.filter.glob.match(c).hasMatch();
        if (any == (t.filter.op == QLatin1String("!="))) return false;
        break;
      }
      case Term::Kind::CounterAbove: {
        const auto v = grid_->counter(source_row, t.counter_id);
        if (!v || *v <= t.number) return false;
        break;
      }
      case Term::Kind::Column:
        if (!holds(t, source_row)) return false;
        break;
    }
  }
  return true;
}

bool GridFilter::holds(const Term& t, int row) const {
  if (t.column < 0) return termHoldsNumber(t.filter, grid_->counter(row, t.counter_id));
  if (t.filter.number && columnKey(keyOf(t.column))->numeric) {
    const double v = grid_->sortKey(row, t.column);
    return termHoldsNumber(t.filter, std::isnan(v) ? std::nullopt : std::optional<double>(v));
  }
  return termHoldsText(t.filter, grid_->index(row, t.column).data().toString());
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
