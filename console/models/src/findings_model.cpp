#include "ibc/console/findings_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <algorithm>
#include <map>
#include <utility>

#include "ibc/console/filter_terms.h"
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
  node_rows_.clear();
  if (job_ == nullptr) return;
  std::map<std::pair<int, std::string>, std::size_t> by_key;
  const auto& findings = job_->report.findings();
  for (int i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    const auto key = std::make_pair(severityRank(f.severity()), f.code());
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      it = by_key.emplace(key, groups_.size()).first;
      groups_.push_back({key.first, q(f.code()), {}, 0, 0});
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
  // A group's node rows in the order their nodes first appear in the report; findings of no
  // known node are told apart by the node name they carry.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    Group& group = groups_[g];
    group.first_row = static_cast<int>(node_rows_.size());
    std::map<std::pair<int, std::string>, std::size_t> rows;
    for (const int fi : group.findings) {
      const int node = nodeOfFinding(*job_, fi);
      const auto key =
          std::make_pair(node, node >= 0 ? std::string() : job_->report.findings(fi).node());
      auto it = rows.find(key);
      if (it == rows.end()) {
        it = rows.emplace(key, node_rows_.size()).first;
        node_rows_.push_back({static_cast<int>(g), node, {}});
      }
      node_rows_[it->second].findings.push_back(fi);
    }
    group.rows = static_cast<int>(node_rows_.size()) - group.first_row;
  }
}

FindingsModel::RowPlace FindingsModel::locate(const QModelIndex& index) const {
  RowPlace w;
  const auto id = static_cast<std::size_t>(index.internalId());
  const std::size_t groups = groups_.size();
  if (id == 0) {
    w.level = GroupLevel;
    w.group = index.row();
    w.finding = groups_[static_cast<std::size_t>(w.group)].findings.front();
  } else if (id <= groups) {
    w.level = NodeLevel;
    w.group = static_cast<int>(id - 1);
    w.node_row = groups_[id - 1].first_row + index.row();
    w.finding = node_rows_[static_cast<std::size_t>(w.node_row)].findings.front();
  } else {
    w.level = PortLevel;
    w.node_row = static_cast<int>(id - groups - 1);
    const NodeRow& row = node_rows_[static_cast<std::size_t>(w.node_row)];
    w.group = row.group;
    w.finding = row.findings[static_cast<std::size_t>(index.row())];
  }
  return w;
}

QModelIndex FindingsModel::worstFinding() const {
  if (job_ == nullptr) return {};
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (int r = 0; r < groups_[g].rows; ++r) {
      if (node_rows_[static_cast<std::size_t>(groups_[g].first_row + r)].node >= 0)
        return index(r, 0, index(static_cast<int>(g), 0));
    }
  }
  return {};
}

QModelIndex FindingsModel::indexOfNode(int node, const QString& device, int port) const {
  if (job_ == nullptr || node < 0) return {};
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    for (int r = 0; r < groups_[g].rows; ++r) {
      const NodeRow& row = node_rows_[static_cast<std::size_t>(groups_[g].first_row + r)];
      if (row.node != node) continue;
      const QModelIndex at = index(r, 0, index(static_cast<int>(g), 0));
      if (row.findings.size() < 2 || device.isEmpty()) return at;
      // The node row stands for its first finding; another port has its own row.
      for (std::size_t k = 1; k < row.findings.size(); ++k) {
        const auto& f = job_->report.findings(row.findings[k]);
        if (q(f.device()) == device && static_cast<int>(f.port()) == port)
          return index(static_cast<int>(k), 0, at);
      }
      return at;
    }
  }
  return {};
}

std::vector<int> FindingsModel::findingsOf(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this) return {};
  const RowPlace w = locate(index);
  switch (w.level) {
    case GroupLevel: return groups_[static_cast<std::size_t>(w.group)].findings;
    case NodeLevel: return node_rows_[static_cast<std::size_t>(w.node_row)].findings;
    case PortLevel: return {w.finding};
  }
  return {};
}

QString FindingsModel::nodeLabel(int finding) const {
  const int n = nodeOfFinding(*job_, finding);
  const auto& f = job_->report.findings(finding);
  if (n < 0 && f.scope() == "job") return q(core::jobWideWhere(f));
  return n >= 0 ? q(job_->report.nodes(n).label()) : q(f.node());
}

QString FindingsModel::whereOf(int finding) const {
  const auto& f = job_->report.findings(finding);
  if (f.device().empty()) return QString();
  return f.port() > 0 ? q(f.device()) + QStringLiteral(" port ") + QString::number(f.port())
                      : q(f.device());
}

QString FindingsModel::copyText(const QModelIndex& index) const {
  QString out;
  for (const int fi : findingsOf(index)) {
    const auto& f = job_->report.findings(fi);
    if (!out.isEmpty()) out += QLatin1Char('\n');
    const QString where = whereOf(fi);
    out += QStringLiteral("%1 %2 on %3%4\n")
               .arg(severityWord(severityRank(f.severity())), q(f.code()), nodeLabel(fi),
                    where.isEmpty() ? QString() : QStringLiteral(" ") + where);
    out += q(f.summary()) + QLatin1Char('\n');
    if (f.evidence_size() > 0) {
      out += QStringLiteral("Evidence:\n");
      for (const auto& e : f.evidence()) out += QStringLiteral("  ") + q(e) + QLatin1Char('\n');
    }
    out += QStringLiteral("Next step: ") + q(f.action()) + QLatin1Char('\n');
    if (!f.source().empty()) out += QStringLiteral("From: ") + q(f.source()) + QLatin1Char('\n');
  }
  return out;
}

QString FindingsModel::nodeName(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this) return {};
  const RowPlace w = locate(index);
  if (w.level == GroupLevel) return {};
  const int n = node_rows_[static_cast<std::size_t>(w.node_row)].node;
  return n >= 0 ? q(job_->report.nodes(n).node()) : QString();
}

FindingsModel::RowFilter FindingsModel::filterRows(const QString& text) const {
  FilterKeys keys;
  keys.text = {QStringLiteral("code"), QStringLiteral("node"), QStringLiteral("device")};
  keys.severity = true;
  const ParsedFilter parsed = parseFilter(text, keys);
  RowFilter out;
  out.error = parsed.error;
  for (int g = 0; g < rowCount(); ++g) {
    const QModelIndex group = index(g, 0);
    bool group_ok = parsed.error.isEmpty();
    for (const FilterTerm& t : parsed.terms) {
      if (t.key == QLatin1String("code"))
        group_ok = group_ok && termHoldsText(t, group.data(CodeRole).toString());
      if (t.key == QLatin1String("severity"))
        group_ok = group_ok && termHoldsNumber(t, group.data(SeverityRole).toDouble());
    }
    std::vector<bool> nodes;
    bool any = false;
    for (int r = 0; r < rowCount(group); ++r) {
      const QModelIndex node = index(r, 0, group);
      bool ok = group_ok;
      for (const FilterTerm& t : parsed.terms) {
        if (!ok) break;
        if (t.key.isEmpty() || t.key == QLatin1String("node")) {
          ok = termHoldsText(t, nodeName(node)) ||
               termHoldsText(t, index(r, Node, group).data().toString());
        } else if (t.key == QLatin1String("device")) {
          bool device = termHoldsText(t, node.data(DeviceRole).toString());
          for (int p = 0; p < rowCount(node) && !device; ++p)
            device = termHoldsText(t, index(p, 0, node).data(DeviceRole).toString());
          ok = device;
        }
      }
      nodes.push_back(ok);
      any = any || ok;
    }
    out.groups.push_back(any);
    out.nodes.push_back(std::move(nodes));
  }
  return out;
}

QModelIndex FindingsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  if (!parent.isValid()) return createIndex(row, column, quintptr(0));
  const auto id = static_cast<std::size_t>(parent.internalId());
  if (id == 0) return createIndex(row, column, quintptr(parent.row() + 1));
  // A port row: its parent node row's place in node_rows_, after the group ids.
  const std::size_t node_row = static_cast<std::size_t>(groups_[id - 1].first_row + parent.row());
  return createIndex(row, column, quintptr(groups_.size() + 1 + node_row));
}

QModelIndex FindingsModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  const auto id = static_cast<std::size_t>(child.internalId());
  if (id <= groups_.size()) return createIndex(static_cast<int>(id - 1), 0, quintptr(0));
  const std::size_t node_row = id - groups_.size() - 1;
  const int group = node_rows_[node_row].group;
  return createIndex(
      static_cast<int>(node_row) - groups_[static_cast<std::size_t>(group)].first_row, 0,
      quintptr(group + 1));
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(groups_.size());
  if (parent.column() != 0) return 0;
  const RowPlace w = locate(parent);
  switch (w.level) {
    case GroupLevel: return groups_[static_cast<std::size_t>(w.group)].rows;
    case NodeLevel: {
      const auto n = node_rows_[static_cast<std::size_t>(w.node_row)].findings.size();
      return n > 1 ? static_cast<int>(n) : 0;  // one finding: the node row is the leaf
    }
    case PortLevel: return 0;
  }
  return 0;
}

int FindingsModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const RowPlace w = locate(index);
  const Group& g = groups_[static_cast<std::size_t>(w.group)];
  if (role == SeverityRole) return g.severity;
  if (role == CodeRole) return g.code;
  if (role == LevelRole) return static_cast<int>(w.level);
  if (w.level == GroupLevel) {
    switch (role) {
      case Qt::DisplayRole:
        if (index.column() == Summary)
          return severityWord(g.severity) + QStringLiteral("  ") + g.code;
        if (index.column() == Node) return tr("%n node(s)", nullptr, g.rows);
        if (index.column() == Count) return static_cast<int>(g.findings.size());
        return {};
      case Qt::ToolTipRole:
        return tr("%1 finding(s) of %2 on %3 node(s)")
            .arg(g.findings.size())
            .arg(g.code)
            .arg(g.rows);
      case Qt::FontRole: {
        QFont f;
        f.setBold(true);
        return f;
      }
      case Qt::ForegroundRole:
        if (g.severity == 3) return QBrush(QColor(0xb0, 0x20, 0x20));
        if (g.severity == 2) return QBrush(QColor(0x9a, 0x5b, 0x00));
        return {};
      case NodeIndexRole: return -1;
      case DeviceRole: return QString();
      case PortRole: return 0;
      case FindingIndexRole: return w.finding;
      default: return {};
    }
  }
  const NodeRow& row = node_rows_[static_cast<std::size_t>(w.node_row)];
  const auto& f = job_->report.findings(w.finding);
  const bool many = w.level == NodeLevel && row.findings.size() > 1;
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Summary:
          return many ? tr("%1  (+%2 more)").arg(q(f.summary())).arg(row.findings.size() - 1)
                      : q(f.summary());
        case Node: return nodeLabel(w.finding);
        case Where:
          if (many) {
            const bool all_ports =
                std::all_of(row.findings.begin(), row.findings.end(),
                            [&](int fi) { return job_->report.findings(fi).port() > 0; });
            return all_ports ? tr("%1 ports").arg(row.findings.size())
                             : tr("%1 places").arg(row.findings.size());
          }
          return w.level == PortLevel && f.device().empty() ? tr("(whole node)")
                                                            : whereOf(w.finding);
        case Count:
          if (w.level == NodeLevel) return static_cast<int>(row.findings.size());
          return {};
        default: return {};
      }
    case Qt::ToolTipRole: {
      if (many) {
        QString tip =
            tr("%1 on %2 in %3 places:").arg(g.code, nodeLabel(w.finding)).arg(row.findings.size());
        for (const int fi : row.findings) {
          const QString where = whereOf(fi);
          tip += QStringLiteral("\n  ") + (where.isEmpty() ? tr("(whole node)") : where);
        }
        return tip;
      }
      QString tip = q(f.summary());
      for (const auto& e : f.evidence()) tip += QStringLiteral("\n  - ") + q(e);
      tip += QStringLiteral("\nnext step: ") + q(f.action());
      return tip;
    }
    case NodeIndexRole: return row.node;
    case DeviceRole: return q(f.device());
    case PortRole: return static_cast<int>(f.port());
    case FindingIndexRole: return w.finding;
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

FindingsFilter::FindingsFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  // A kept node row brings its port rows; a group shows when one of its nodes is kept.
  setRecursiveFilteringEnabled(true);
  setAutoAcceptChildRows(true);
}

void FindingsFilter::setFindingsModel(FindingsModel* model) {
  findings_ = model;
  setSourceModel(model);
  connect(model, &QAbstractItemModel::modelReset, this, [this] { recompute(); });
  recompute();
}

void FindingsFilter::setFilterText(const QString& text) {
  text_ = text;
  recompute();
}

void FindingsFilter::recompute() {
  keep_ = findings_ != nullptr && !text_.trimmed().isEmpty() ? findings_->filterRows(text_)
                                                             : FindingsModel::RowFilter{};
  invalidateFilter();
}

bool FindingsFilter::filterAcceptsRow(int source_row, const QModelIndex& source_parent) const {
  if (text_.trimmed().isEmpty()) return true;
  if (!keep_.error.isEmpty()) return false;
  // Node rows decide (a group is shown through them, ports come with them).
  if (!source_parent.isValid() || source_parent.parent().isValid()) return false;
  const auto g = static_cast<std::size_t>(source_parent.row());
  const auto r = static_cast<std::size_t>(source_row);
  return g < keep_.nodes.size() && r < keep_.nodes[g].size() && keep_.nodes[g][r];
}

}  // namespace ibc::console
