#include "ibc/console/counters_model.h"

#include "ibc/console/units.h"

#include <QBrush>
#include <QColor>
#include <QLocale>
#include <algorithm>

#include "ibc/console/port_counters.h"
#include "ibc/core/counters.h"

namespace ibc::console {

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

namespace v1 = ::ibcollect::v1;

CountersModel::CountersModel(QObject* parent) : QAbstractTableModel(parent) {}

void CountersModel::setPort(const v1::Snapshot* snapshot, const QString& device, int port) {
  beginResetModel();
  rows_.clear();
  if (snapshot != nullptr) {
    const auto& snap = *snapshot;
    const auto* window = core::latestWindow(snap);
    const double seconds = window != nullptr ? window->interval_seconds() : 0;
    for (auto& c : portCounters(snap, device.toStdString(), static_cast<uint32_t>(port))) {
      Row r;
      r.name = QString::fromStdString(c.name);
      r.group = c.group;
      r.total = c.total;
      r.delta = c.delta;
      if (c.delta && seconds > 0) r.rate = static_cast<double>(*c.delta) / seconds;
      r.unavailable = QString::fromStdString(c.unavailable);
      const bool error = c.trouble != core::CounterClass::None;
      if (error) {
        const auto name = core::counterClassName(c.trouble);
        r.meaning = QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
      }
      if (!c.total) {
        r.concern = Unreadable;
      } else if (error && c.delta && *c.delta > 0) {
        r.concern = Moved;
      } else if (error && *c.total > 0) {
        r.concern = NonZeroError;
      }
      rows_.push_back(std::move(r));
    }
    std::stable_sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) {
      if (a.concern != b.concern) return a.concern < b.concern;
      return a.name < b.name;
    });
  }
  endResetModel();
}

int CountersModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CountersModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CountersModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Name: return r.name;
        case Group: return r.group;
        // In the counter's unit (units.h): packets, bytes with binary prefixes, events.
        case Total:
          return r.total ? q(formatCounter(r.name.toStdString(), static_cast<double>(*r.total)))
                         : tr("unavailable");
        case Delta:
          return r.delta ? (*r.delta > 0 ? QStringLiteral("+") : QString()) +
                               q(formatCounter(r.name.toStdString(), static_cast<double>(*r.delta)))
                         : QString();
        case RatePerSecond:
          return r.rate ? q(formatCounterRate(r.name.toStdString(), *r.rate)) : QString();
        case Unavailable: return r.unavailable;
        default: return {};
      }
    case SortRole:
      switch (index.column()) {
        case Total: return r.total ? QVariant(static_cast<qulonglong>(*r.total)) : QVariant(-1.0);
        case Delta: return r.delta ? QVariant(static_cast<qlonglong>(*r.delta)) : QVariant(-1.0);
        case RatePerSecond: return r.rate ? QVariant(*r.rate) : QVariant(-1.0);
        default: return data(index, Qt::DisplayRole);
      }
    case RawValueRole: return r.total ? QVariant(static_cast<qulonglong>(*r.total)) : QVariant();
    case ConcernRole: return static_cast<int>(r.concern);
    case Qt::ToolTipRole:
      if (index.column() != Name) return {};
      if (r.concern == Moved)
        return tr("%1 counter that moved during the window: the strongest evidence").arg(r.meaning);
      if (!r.meaning.isEmpty()) return tr("%1 counter").arg(r.meaning);
      return tr("traffic or configuration: not judged");
    case Qt::BackgroundRole:
      // A counter that moved during the window is what matters most (docs/codes.md); an error
      // counter's total from before the window is history, still worth a look.
      if (r.concern == Moved && (index.column() == Delta || index.column() == Name))
        return QBrush(QColor(0xff, 0xd0, 0xd0));
      if (r.concern == NonZeroError && (index.column() == Total || index.column() == Name))
        return QBrush(QColor(0xff, 0xee, 0xc8));
      return {};
    case Qt::ForegroundRole:
      if (!r.total) return QBrush(QColor(0x80, 0x80, 0x80));
      return {};
    case Qt::TextAlignmentRole:
      if (index.column() == Total || index.column() == Delta || index.column() == RatePerSecond)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default: return {};
  }
}

QVariant CountersModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name: return tr("Counter");
    case Group: return tr("Group");
    case Total: return tr("Total (latest)");
    case Delta: return tr("Window delta");
    case RatePerSecond: return tr("Rate");
    case Unavailable: return tr("Unavailable because");
    default: return {};
  }
}

CountersFilter::CountersFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(CountersModel::SortRole);
}

void CountersFilter::setFilterText(const QString& text) {
  FilterKeys keys;
  keys.text = {QStringLiteral("group"), QStringLiteral("counter")};
  keys.numeric = {QStringLiteral("total"), QStringLiteral("delta"), QStringLiteral("rate")};
  ParsedFilter parsed = parseFilter(text, keys);
  terms_ = std::move(parsed.terms);
  error_ = parsed.error;
  invalidateFilter();
}

bool CountersFilter::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (!error_.isEmpty()) return false;
  const QAbstractItemModel* m = sourceModel();
  auto cell = [&](int column) { return m->index(source_row, column, source_parent); };
  // The model's sort keys: numbers, -1 when the counter has none.
  auto number = [&](int column) -> std::optional<double> {
    const QVariant v = cell(column).data(CountersModel::SortRole);
    if (!v.isValid() || v.toDouble() < 0) return std::nullopt;
    return v.toDouble();
  };
  for (const FilterTerm& t : terms_) {
    bool ok = true;
    if (t.key.isEmpty() || t.key == QLatin1String("counter")) {
      ok = termHoldsText(t, cell(CountersModel::Name).data().toString());
    } else if (t.key == QLatin1String("group")) {
      ok = termHoldsText(t, cell(CountersModel::Group).data().toString());
    } else if (t.key == QLatin1String("total")) {
      ok = termHoldsNumber(t, number(CountersModel::Total));
    } else if (t.key == QLatin1String("delta")) {
      ok = termHoldsNumber(t, number(CountersModel::Delta));
    } else if (t.key == QLatin1String("rate")) {
      ok = termHoldsNumber(t, number(CountersModel::RatePerSecond));
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace ibc::console
