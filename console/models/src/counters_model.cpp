#include "ibc/console/counters_model.h"

#include <QBrush>
#include <QColor>
#include <QLocale>

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

CountersModel::CountersModel(QObject* parent) : QAbstractTableModel(parent) {}

void CountersModel::setPort(const JobData* job, int node_index, const QString& device, int port) {
  beginResetModel();
  rows_.clear();
  if (job != nullptr && node_index >= 0 && node_index < static_cast<int>(job->snapshots.size())) {
    const auto& snap = job->snapshots[static_cast<std::size_t>(node_index)];
    const std::string dev = device.toStdString();
    const double seconds = snap.has_window() ? snap.window().interval_seconds() : 0;
    const v1::PortCounterSample* sample = nullptr;
    if (snap.has_window()) {
      for (const auto& s : snap.window().ports()) {
        if (s.device() == dev && static_cast<int>(s.port()) == port) sample = &s;
      }
    }
    auto later = [&](const google::protobuf::RepeatedPtrField<v1::Counter>* list,
                     const std::string& name) -> const v1::Counter* {
      if (list == nullptr) return nullptr;
      for (const auto& c : *list) {
        if (c.name() == name) return &c;
      }
      return nullptr;
    };
    auto add = [&](const google::protobuf::RepeatedPtrField<v1::Counter>& list,
                   const QString& group,
                   const google::protobuf::RepeatedPtrField<v1::Counter>* second) {
      for (const auto& c : list) {
        Row r;
        r.name = QString::fromStdString(c.name());
        r.group = group;
        if (c.unavailable_reason().empty()) {
          r.total = c.value();
          if (const auto* s = later(second, c.name());
              s != nullptr && s->unavailable_reason().empty()) {
            r.delta = static_cast<qint64>(s->value() - c.value());
            if (seconds > 0) r.rate = static_cast<double>(*r.delta) / seconds;
          }
        } else {
          r.unavailable = QString::fromStdString(c.unavailable_reason());
        }
        rows_.push_back(std::move(r));
      }
    };
    for (const auto& d : snap.devices()) {
      if (d.name() != dev) continue;
      for (const auto& p : d.ports()) {
        if (static_cast<int>(p.port()) != port) continue;
        add(p.counters(), QStringLiteral("counters"), sample ? &sample->counters() : nullptr);
        add(p.counters_ext(), QStringLiteral("counters_ext"),
            sample ? &sample->counters_ext() : nullptr);
        add(p.hw_counters(), QStringLiteral("hw_counters"),
            sample ? &sample->hw_counters() : nullptr);
      }
      add(d.hw_counters(), QStringLiteral("device hw_counters"), nullptr);
    }
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
  const QLocale c = QLocale::c();
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Name: return r.name;
        case Group: return r.group;
        case Total: return r.total ? c.toString(*r.total) : tr("unavailable");
        case Delta:
          return r.delta ? (*r.delta > 0 ? QStringLiteral("+") : QString()) + c.toString(*r.delta)
                         : QString();
        case RatePerSecond:
          return r.rate ? c.toString(*r.rate, 'f', 1) + QStringLiteral("/s") : QString();
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
    case Qt::BackgroundRole:
      // A counter that moved during the window is what matters most (DESIGN §5).
      if (r.delta && *r.delta > 0 && index.column() == Delta)
        return QBrush(QColor(0xff, 0xd0, 0xd0));
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
    case Total: return tr("Total");
    case Delta: return tr("Window delta");
    case RatePerSecond: return tr("Rate");
    case Unavailable: return tr("Unavailable because");
    default: return {};
  }
}

}  // namespace ibc::console
