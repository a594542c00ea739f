#include "ibc/console/node_grid_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <algorithm>
#include <map>

#include "ibc/console/port_counters.h"
#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Whether finding `f` belongs to node `n` (by the input it came from, never by host name
// alone: two snapshots of one host are two nodes) and applies to the row's device/port.
bool findingOnNode(const v1::Finding& f, const v1::NodeReport& n) {
  if (!f.source().empty() && !n.source().empty()) return f.source() == n.source();
  return f.node() == n.node() || f.node() == n.label();
}

bool findingOnPort(const v1::Finding& f, const std::string& device, uint32_t port) {
  if (f.device().empty()) return true;  // node-level: every row of the node
  if (f.device() != device) return false;
  return f.port() == 0 || f.port() == port;
}

QColor severityColor(int rank) {
  switch (rank) {
    case 3: return QColor(0xd9, 0x3b, 0x3b);  // critical
    case 2: return QColor(0xf0, 0xa0, 0x30);  // warning
    default: return {};
  }
}

}  // namespace

NodeGridModel::NodeGridModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeGridModel::setJob(const JobData* job) {
  beginResetModel();
  job_ = job;
  rebuild();
  endResetModel();
}

void NodeGridModel::rebuild() {
  rows_.clear();
  outlier_rows_ = 0;
  for (auto& m : majority_) m.clear();
  if (job_ == nullptr) return;
  const auto& report = job_->report;
  for (int i = 0; i < report.nodes_size(); ++i) {
    const auto& n = report.nodes(i);
    std::vector<const v1::Finding*> mine;
    for (const auto& f : report.findings()) {
      if (findingOnNode(f, n)) mine.push_back(&f);
    }
    auto fill = [&](Row& r, const std::string& device, uint32_t port) {
      r.node = i;
      r.cells[Node] = q(n.label().empty() ? n.node() : n.label());
      r.sort[Node] = r.cells[Node];
      const v1::Finding* worst = nullptr;
      int count = 0;
      for (const auto* f : mine) {
        if (!device.empty() && !findingOnPort(*f, device, port)) continue;
        ++count;
        r.codes << q(f->code());
        const int rank = severityRank(f->severity());
        if (worst == nullptr || rank > severityRank(worst->severity()) ||
            (rank == severityRank(worst->severity()) &&
             core::findingSpecificity(f->code()) < core::findingSpecificity(worst->code())))
          worst = f;
      }
      r.codes.removeDuplicates();
      r.severity = worst != nullptr ? severityRank(worst->severity()) : 0;
      r.cells[Findings] = QString::number(count);
      r.sort[Findings] = count;
      r.cells[Verdict] = n.unreachable_reason().empty()
                             ? (worst != nullptr && r.severity >= 2 ? q(worst->severity()).toUpper()
                                                                    : QStringLiteral("OK"))
                             : QStringLiteral("UNREACHABLE");
      r.sort[Verdict] = n.unreachable_reason().empty() ? r.severity : 4;
      r.cells[WorstFinding] = worst != nullptr && r.severity >= 1 ? q(worst->code()) : QString();
      r.sort[WorstFinding] = r.cells[WorstFinding];
    };
    if (n.ports_size() == 0) {
      Row r;
      fill(r, "", 0);
      r.cells[State] = n.unreachable_reason().empty() ? QStringLiteral("no RDMA port")
                                                      : QStringLiteral("did not answer");
      for (int c = Device; c < ColumnCount; ++c) {
        if (!r.sort[c].isValid()) r.sort[c] = r.cells[c];
      }
      rows_.push_back(std::move(r));
      continue;
    }
    for (int p = 0; p < n.ports_size(); ++p) {
      const auto& port = n.ports(p);
      Row r;
      fill(r, port.device(), port.port());
      r.port = p;
      r.cells[Device] = q(port.device());
      r.cells[Port] = QString::number(port.port());
      r.sort[Port] = port.port();
      r.cells[State] = q(port.state());
      r.cells[PhysState] = q(port.phys_state());
      r.cells[Rate] =
          port.rate_gbps() > 0 ? QString::number(port.rate_gbps()) + " Gb/s" : q(port.rate());
      r.sort[Rate] = port.rate_gbps();
      r.cells[LinkLayer] = q(port.link_layer());
      r.cells[Firmware] = q(port.fw_ver());
      r.cells[Function] = port.virtual_function() ? QStringLiteral("VF") : QString();
      for (int c = Device; c < ColumnCount; ++c) {
        if (!r.sort[c].isValid()) r.sort[c] = r.cells[c];
      }
      rows_.push_back(std::move(r));
    }
  }
  // The job's majority per judged column: a value more than half of the port rows share.
  // Cells that differ are the outliers an engineer looks for first.
  for (int c : {State, PhysState, Rate, LinkLayer, Firmware, Function}) {
    std::map<QString, int> counts;
    int port_rows = 0;
    for (const auto& r : rows_) {
      if (r.port < 0) continue;
      ++port_rows;
      ++counts[r.cells[c]];
    }
    for (const auto& [value, count] : counts) {
      if (2 * count > port_rows) majority_[c] = value;
    }
    if (majority_[c].isNull() || port_rows < 2) continue;
    for (auto& r : rows_) {
      if (r.port >= 0 && r.cells[c] != majority_[c]) r.outlier[c] = true;
    }
  }
  for (const auto& r : rows_) {
    if (std::any_of(std::begin(r.outlier), std::end(r.outlier), [](bool b) { return b; }))
      ++outlier_rows_;
  }
}

int NodeGridModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int NodeGridModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant NodeGridModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
    return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  const int c = index.column();
  switch (role) {
    case Qt::DisplayRole:
    case RawValueRole: return r.cells[c];
    case SortRole: return r.sort[c];
    case SeverityRole: return r.severity;
    case OutlierRole: return r.outlier[c];
    case NodeIndexRole: return r.node;
    case CodesRole: return r.codes;
    case Qt::BackgroundRole:
      if (c == Verdict && r.severity >= 2) return QBrush(severityColor(r.severity));
      if (c == Verdict && r.cells[Verdict] == QLatin1String("UNREACHABLE"))
        return QBrush(severityColor(3));
      if (r.outlier[c]) return QBrush(QColor(0xff, 0xe0, 0x8a));
      return {};
    case Qt::FontRole:
      if (r.outlier[c] || (c == Verdict && r.severity >= 2)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      return {};
    case Qt::ToolTipRole:
      if (r.outlier[c]) {
        return tr("%1 differs from the job's majority (%2)")
            .arg(r.cells[c].isEmpty() ? tr("(empty)") : r.cells[c],
                 majority_[c].isEmpty() ? tr("empty") : majority_[c]);
      }
      if (c == WorstFinding || c == Findings) return r.codes.join(QStringLiteral(", "));
      return {};
    case Qt::TextAlignmentRole:
      if (c == Port || c == Rate || c == Findings)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default: return {};
  }
}

QVariant NodeGridModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Node: return tr("Node");
    case Device: return tr("Device");
    case Port: return tr("Port");
    case State: return tr("State");
    case PhysState: return tr("Phys state");
    case Rate: return tr("Rate");
    case LinkLayer: return tr("Link");
    case Firmware: return tr("Firmware");
    case Function: return tr("VF");
    case Findings: return tr("Findings");
    case Verdict: return tr("Verdict");
    case WorstFinding: return tr("Worst finding");
    default: return {};
  }
}

int NodeGridModel::rowOf(int node_index, const QString& device, int port) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (r.node != node_index) continue;
    if (device.isEmpty() ||
        (r.cells[Device] == device && (port == 0 || r.cells[Port].toInt() == port)))
      return static_cast<int>(i);
  }
  return -1;
}

QString NodeGridModel::majority(Column column) const { return majority_[column]; }

std::optional<double> NodeGridModel::counter(int row, const QString& name) const {
  if (job_ == nullptr || row < 0 || row >= static_cast<int>(rows_.size())) return std::nullopt;
  const Row& r = rows_[static_cast<std::size_t>(row)];
  if (r.port < 0 || r.node >= static_cast<int>(job_->snapshots.size())) return std::nullopt;
  const auto& summary = job_->report.nodes(r.node).ports(r.port);
  const std::string wanted = name.toStdString();
  for (const auto& c : portCounters(job_->snapshots[static_cast<std::size_t>(r.node)],
                                    summary.device(), summary.port())) {
    if (c.name == wanted && c.total) return c.amount();
  }
  return std::nullopt;
}

}  // namespace ibc::console
