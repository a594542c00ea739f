#include "ibc/console/grid_filter.h"

#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <optional>

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

// Words split on spaces, except inside double quotes (worst="NODE OUTLIER").
QStringList splitTerms(const QString& text) {
  QStringList out;
  QString word;
  bool quoted = false;
  for (const QChar c : text) {
    if (c == QLatin1Char('"')) quoted = !quoted;
    if (c == QLatin1Char(' ') && !quoted) {
      if (!word.isEmpty()) out << word;
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.isEmpty()) out << word;
  return out;
}

std::optional<double> numberIn(const QString& text) {
  static const QRegularExpression kLeading(QStringLiteral("^\\s*(-?\\d+(?:\\.\\d+)?)"));
  const auto m = kLeading.match(text);
  if (!m.hasMatch()) return std::nullopt;
  return m.captured(1).toDouble();
}

bool compareNumbers(double v, const QString& op, double n) {
  if (op == QLatin1String("=")) return v == n;
  if (op == QLatin1String("!=")) return v != n;
  if (op == QLatin1String("<")) return v < n;
  if (op == QLatin1String("<=")) return v <= n;
  if (op == QLatin1String(">")) return v > n;
  return v >= n;
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
    const auto n = numberIn(value);
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
  static const QRegularExpression kSeverity(
      QStringLiteral("^(?:severity|sev)(>=|=)(critical|warning|info|ok)$"),
      QRegularExpression::CaseInsensitiveOption);
  static const QRegularExpression kCode(QStringLiteral("^code=([A-Za-z0-9_]+)$"));
  static const QRegularExpression kTerm(
      QStringLiteral("^([A-Za-z][A-Za-z0-9_]*)(!=|<=|>=|=|<|>)(.*)$"));
  static const QRegularExpression kNumber(QStringLiteral("^-?\\d+(?:\\.\\d+)?$"));
  for (const QString& word : splitTerms(text)) {
    if (auto m = kSeverity.match(word); m.hasMatch()) {
      Term t{Term::Kind::MinSeverity, m.captured(1), 0, {}, -1};
      t.number = severityFromWord(m.captured(2));
      terms_.push_back(t);
    } else if (auto c = kCode.match(word); c.hasMatch()) {
      terms_.push_back({Term::Kind::Code, c.captured(1).toUpper(), 0, {}, -1});
    } else if (auto g = kTerm.match(word); g.hasMatch()) {
      Term t{Term::Kind::Column, {}, 0, {}, -1};
      t.op = g.captured(2);
      QString value = g.captured(3);
      if (value.size() >= 2 && value.startsWith(QLatin1Char('"')) &&
          value.endsWith(QLatin1Char('"')))
        value = value.mid(1, value.size() - 2);
      t.text = value;
      t.numeric = kNumber.match(value).hasMatch();
      if (t.numeric) t.number = value.toDouble();
      const bool ordered = t.op != QLatin1String("=") && t.op != QLatin1String("!=");
      const ColumnKey* key = columnKey(g.captured(1));
      if (key != nullptr) {
        t.column = key->column;
        if (ordered && !(key->numeric && t.numeric)) {
          error_ = tr("cannot read \"%1\": %2 compares numbers only with < <= > >= (use = or "
                      "!= for words)")
                       .arg(word, g.captured(1));
          continue;
        }
        if (key->numeric && !t.numeric && !value.isEmpty()) {
          error_ = tr("cannot read \"%1\": %2 is a number (%2>=%3)")
                       .arg(word, g.captured(1), QStringLiteral("200"));
          continue;
        }
        t.glob = QRegularExpression(QRegularExpression::wildcardToRegularExpression(value),
                                    QRegularExpression::CaseInsensitiveOption);
      } else if (t.numeric && g.captured(1) == g.captured(1).toLower()) {
        // A counter by its name: symbol_error>10.
        if (t.op == QLatin1String(">")) t.kind = Term::Kind::CounterAbove;
        t.text = g.captured(1);
        t.column = -1;
      } else {
        error_ =
            tr("cannot read \"%1\": %2 is no column (node, device, port, state, phys, "
               "rate, link, mtu, fw, vf, busbw, findings, verdict, worst, signer) and no counter "
               "compared with a number")
                .arg(word, g.captured(1));
        continue;
      }
      terms_.push_back(t);
    } else if (word.contains(QLatin1Char('=')) || word.contains(QLatin1Char('>')) ||
               word.contains(QLatin1Char('<'))) {
      error_ = tr("cannot read \"%1\": use state!=ACTIVE, rate<200, severity>=warning, "
                  "code=CODE, counter>N or a node glob")
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
      case Term::Kind::Column:
        if (!holds(t, source_row)) return false;
        break;
    }
  }
  return true;
}

bool GridFilter::holds(const Term& t, int row) const {
  const bool negate = t.op == QLatin1String("!=");
  if (t.column < 0) {  // a counter by name; a row without it holds only "!="
    const auto v = grid_->counter(row, t.counter_id);
    return v ? compareNumbers(*v, t.op, t.number) : negate;
  }
  if (t.numeric) {
    const double v = grid_->sortKey(row, t.column);
    if (std::isnan(v)) return negate;
    return compareNumbers(v, t.op, t.number);
  }
  // Words: the whole cell, a glob over it, or one of its words ("4: ACTIVE" is ACTIVE).
  const QString cell = grid_->index(row, t.column).data().toString();
  bool match = t.text.isEmpty() ? cell.trimmed().isEmpty()
                                : cell.compare(t.text, Qt::CaseInsensitive) == 0 ||
                                      t.glob.match(cell).hasMatch();
  if (!match && !t.text.isEmpty()) {
    static const QRegularExpression kWordBreak(QStringLiteral("[^A-Za-z0-9_.]+"));
    for (const QString& w : cell.split(kWordBreak, Qt::SkipEmptyParts)) {
      if (w.compare(t.text, Qt::CaseInsensitive) == 0) {
        match = true;
        break;
      }
    }
  }
  return negate ? !match : match;
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
