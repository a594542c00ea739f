#include "ibc/console/findings_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <algorithm>
#include <map>

#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString severityWord(int rank) {
  switch (rank) {
    case 3: return QStringLiteral("CRITICAL");
    case 2: return QStringLiteral("WARNING");
    case 1: return QStringLiteral("INFO");
    default: return QStringLiteral("OK");
  }
}

}  // namespace

FindingsModel::FindingsModel(QObject* parent) : QAbstractItemModel(parent) {}

void FindingsModel::setJob(const JobData* job) {
  beginResetModel();
  job_ = job;
  rebuild();
  endResetModel();
}

void FindingsModel::rebuild() {
  groups_.clear();
  if (job_ == nullptr) return;
  std::map<std::pair<int, std::string>, std::size_t> by_key;
  const auto& findings = job_->report.findings();
  for (int i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    const auto key = std::make_pair(severityRank(f.severity()), f.code());
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      it = by_key.emplace(key, groups_.size()).first;
      groups_.push_back({key.first, q(f.code()), {}});
    }
    groups_[it->second].findings.push_back(i);
  }
  std::stable_sort(groups_.begin(), groups_.end(), [](const Group& a, const Group& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    const int sa = core::findingSpecificity(a.code.toStdString());
    const int sb = core::findingSpecificity(b.code.toStdString());
    if (sa != sb) return sa < sb;  // lower is more specific
    return a.code < b.code;
  });
}

int FindingsModel::nodeOf(int finding) const { return nodeOfFinding(*job_, finding); }

QModelIndex FindingsModel::worstFinding() const {
  if (job_ == nullptr) return {};
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const auto& findings = groups_[g].findings;
    for (std::size_t r = 0; r < findings.size(); ++r) {
      if (nodeOf(findings[r]) >= 0)
        return index(static_cast<int>(r), 0, index(static_cast<int>(g), 0));
    }
  }
  return {};
}

QModelIndex FindingsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, quintptr(0));
  return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex FindingsModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(groups_.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return static_cast<int>(groups_[static_cast<std::size_t>(parent.row())].findings.size());
}

int FindingsModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const bool child = index.internalId() != 0;
  const Group& g = groups_[child ? index.internalId() - 1 : static_cast<std::size_t>(index.row())];
  if (role == SeverityRole) return g.severity;
  if (role == CodeRole) return g.code;
  if (!child) {
    switch (role) {
      case Qt::DisplayRole:
        if (index.column() == Summary)
          return severityWord(g.severity) + QStringLiteral("  ") + g.code;
        if (index.column() == Count) return static_cast<int>(g.findings.size());
        return {};
      case Qt::FontRole: {
        QFont f;
        f.setBold(true);
        return f;
      }
      case Qt::ForegroundRole:
        if (g.severity == 3) return QBrush(QColor(0xb0, 0x20, 0x20));
        if (g.severity == 2) return QBrush(QColor(0x9a, 0x5b, 0x00));
        return {};
      default: return {};
    }
  }
  const int fi = g.findings[static_cast<std::size_t>(index.row())];
  const auto& f = job_->report.findings(fi);
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Summary: return q(f.summary());
        case Node: {
          const int n = nodeOf(fi);
          return n >= 0 ? q(job_->report.nodes(n).label()) : q(f.node());
        }
        case Where:
          if (f.device().empty()) return QString();
          return f.port() > 0 ? q(f.device()) + QStringLiteral(" port ") + QString::number(f.port())
                              : q(f.device());
        default: return {};
      }
    case Qt::ToolTipRole: {
      QString tip = q(f.summary());
      for (const auto& e : f.evidence()) tip += QStringLiteral("\n  - ") + q(e);
      tip += QStringLiteral("\nnext step: ") + q(f.action());
      return tip;
    }
    case NodeIndexRole: return nodeOf(fi);
    case DeviceRole: return q(f.device());
    case PortRole: return static_cast<int>(f.port());
    case FindingIndexRole: return fi;
    default: return {};
  }
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Summary: return tr("Finding");
    case Node: return tr("Node");
    case Where: return tr("Device / port");
    case Count: return tr("Count");
    default: return {};
  }
}

}  // namespace ibc::console
