#include "ibc/console/node_grid_model.h"

#include "ibc/core/counters.h"
#include "ibc/core/node_metrics.h"

#include <QBrush>
#include <QCollator>
#include <QColor>
#include <QFont>
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>

#include "ibc/console/port_counters.h"
#include "ibc/core/report.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

using PortKey = std::pair<std::string, uint32_t>;

// A node's findings by where they hold, so that each of its rows takes its own in one lookup
// instead of a pass over all of them: node-level findings (no device) hold on every row, a
// device's (port 0) on every port of the device, a port's on that port.
class FindingsByPort {
 public:
  explicit FindingsByPort(const std::vector<const v1::Finding*>& all) : all_(all) {
    for (std::size_t k = 0; k < all.size(); ++k) {
      const v1::Finding& f = *all[k];
      if (f.device().empty()) {
        node_.push_back(k);
      } else if (f.port() == 0) {
        device_[f.device()].push_back(k);
      } else {
        port_[{f.device(), f.port()}].push_back(k);
      }
    }
  }
  // The findings that hold on `device` `port` (every one for the node row: device ""), in
  // the order of `all`.
  std::vector<const v1::Finding*> of(const std::string& device, uint32_t port) const {
    if (device.empty()) return all_;
    std::vector<std::size_t> at = node_;
    if (auto d = device_.find(device); d != device_.end())
      at.insert(at.end(), d->second.begin(), d->second.end());
    if (auto p = port_.find({device, port}); p != port_.end())
      at.insert(at.end(), p->second.begin(), p->second.end());
    std::sort(at.begin(), at.end());
    std::vector<const v1::Finding*> out;
    out.reserve(at.size());
    for (std::size_t k : at) out.push_back(all_[k]);
    return out;
  }

 private:
  const std::vector<const v1::Finding*>& all_;
  std::vector<std::size_t> node_;
  std::map<std::string, std::vector<std::size_t>> device_;
  std::map<PortKey, std::vector<std::size_t>> port_;
};

QColor severityColor(int rank) {
  switch (rank) {
    case 3: return QColor(0xd9, 0x3b, 0x3b);  // critical
    case 2: return QColor(0xf0, 0xa0, 0x30);  // warning
    default: return {};
  }
}

}  // namespace

NodeGridModel::NodeGridModel(QObject* parent) : QAbstractTableModel(parent) {}

const char* NodeGridModel::counterOfColumn(int column) {
  switch (column) {
    case SymbolErrors: return "symbol_error";
    case LinkDowned: return "link_downed";
    case RcvErrors: return "port_rcv_errors";
    case XmitDiscards: return "port_xmit_discards";
    case XmitWait: return "port_xmit_wait";
    default: return "";
  }
}

void NodeGridModel::setJob(const JobData* job) { setJob(job, prepare(job)); }

NodeGridModel::Prepared NodeGridModel::setJob(const JobData* job, Prepared prepared) {
  beginResetModel();
  job_ = job;
  std::swap(rows_, prepared.rows);
  std::swap(texts_, prepared.texts);
  std::swap(code_lists_, prepared.code_lists);
  for (int c = 0; c < ColumnCount; ++c) std::swap(majority_[c], prepared.majority[c]);
  outlier_rows_ = prepared.outlier_rows;
  has_window_ = prepared.has_window;
  std::copy(std::begin(prepared.empty_column), std::end(prepared.empty_column),
            std::begin(empty_column_));
  for (int c = 0; c < ColumnCount; ++c) std::swap(widest_rows_[c], prepared.widest_rows[c]);
  endResetModel();
  return prepared;  // now the previous job's rows
}

int NodeGridModel::counterId(std::string_view name) const {
  return job_ != nullptr ? job_->counter_names.find(name) : -1;
}

namespace {

constexpr double kEmpty = std::numeric_limits<double>::quiet_NaN();

QString formatAmount(double v) {
  if (v == 0) return QStringLiteral("0");
  if (v >= 100 || v == static_cast<double>(static_cast<int64_t>(v)))
    return QString::number(static_cast<qint64>(v + 0.5));
  return QString::number(v, 'f', v >= 10 ? 1 : 2);
}

}  // namespace

namespace {

// The key counters' columns, in the order of NodeGridModel::KeyIds.
constexpr std::array<int, 5> kKeyColumns = {NodeGridModel::SymbolErrors, NodeGridModel::LinkDowned,
                                            NodeGridModel::RcvErrors, NodeGridModel::XmitDiscards,
                                            NodeGridModel::XmitWait};

}  // namespace

NodeGridModel::Prepared NodeGridModel::prepare(const JobData* job) {
  Prepared out;
  out.rows.clear();
  out.outlier_rows = 0;
  out.has_window = false;
  for (auto& m : out.majority) m.clear();
  if (job == nullptr) return out;
  KeyIds key_ids;
  for (std::size_t k = 0; k < kKeyColumns.size(); ++k)
    key_ids[k] = job->counter_names.find(counterOfColumn(kKeyColumns[k]));
  out.rows.reserve(static_cast<std::size_t>(job->report.nodes_size()) * 8);
  Interned ids;
  for (int i = 0; i < job->report.nodes_size(); ++i) addNodeRows(out, ids, *job, i, key_ids);
  judgeColumns(out, *job, key_ids);
  indexColumns(out);
  return out;
}

NodeGridModel::TextId NodeGridModel::intern(Prepared& out, Interned& ids, const QString& text) {
  if (text.isEmpty()) return 0;
  const auto [at, fresh] = ids.texts.try_emplace(text, static_cast<TextId>(out.texts.size()));
  if (fresh) out.texts.push_back(text);
  return at->second;
}

NodeGridModel::TextId NodeGridModel::internCodes(Prepared& out, Interned& ids,
                                                 const QStringList& codes) {
  if (codes.isEmpty()) return 0;
  const auto [at, fresh] =
      ids.code_lists.try_emplace(codes, static_cast<TextId>(out.code_lists.size()));
  if (fresh) out.code_lists.push_back(codes);
  return at->second;
}

// A snapshot's ports (device, port) with their kept counters and netdev MTUs.
std::map<PortKey, NodeGridModel::PortSources> NodeGridModel::portSourcesOf(
    const v1::Snapshot& snap, const NodeCounters* counters) {
  std::map<PortKey, PortSources> sources;
  for (const auto& d : snap.devices()) {
    for (const auto& p : d.ports()) sources[{d.name(), p.port()}] = {&p, nullptr, {}};
  }
  for (std::size_t k = 0; counters != nullptr && k < counters->ports.size(); ++k) {
    const auto& kept = counters->ports[k];
    if (auto it = sources.find({kept.device, kept.port}); it != sources.end())
      it->second.counters = &kept;
  }
  for (const auto& nd : snap.netdevs()) {
    auto it = sources.find({nd.rdma_device(), nd.rdma_port()});
    if (nd.has_mtu() && it != sources.end() && !it->second.netdev_mtu)
      it->second.netdev_mtu = nd.mtu();
  }
  return sources;
}

// One row per port of node `i` (a node-only row when it has none), with its cells, sort keys
// and counters.
void NodeGridModel::addNodeRows(Prepared& out, Interned& ids, const JobData& job, int i,
                                const KeyIds& key_ids) {
  const auto& report = job.report;
  const auto& n = report.nodes(i);
  // The node's findings as every page attributes them (JobData's index, one pass).
  std::vector<const v1::Finding*> mine;
  for (const int k : findingsOfNode(job, i)) mine.push_back(&report.findings(k));
  std::optional<v1::Snapshot> kept;  // parsed for this node's rows (sources point into it)
  if (i < static_cast<int>(job.snapshots.size())) kept = job.snapshots[std::size_t(i)];
  const v1::Snapshot* snap = kept ? &*kept : nullptr;
  const NodeCounters* counters =
      i < static_cast<int>(job.counters.size()) ? &job.counters[std::size_t(i)] : nullptr;
  const double interval = counters != nullptr ? counters->interval_seconds : 0;
  if (interval > 0) out.has_window = true;
  // The snapshot's ports, indexed once.
  const std::map<PortKey, PortSources> sources =
      snap != nullptr ? portSourcesOf(*snap, counters) : std::map<PortKey, PortSources>{};
  const FindingsByPort by_port(mine);
  // Core's value, the one NODE_OUTLIER judges (none when no row moved data).
  const std::optional<double> busbw =
      counters != nullptr ? counters->peak_busbw_gbs : std::optional<double>();
  auto fill = [&](Row& r, const std::string& device, uint32_t port) {
    for (double& k : r.sort) k = kEmpty;
    r.node = i;
    r.cells[Node] = intern(out, ids, q(n.label().empty() ? n.node() : n.label()));
    const v1::Finding* worst = nullptr;
    int count = 0;
    QStringList codes;
    for (const auto* f : by_port.of(device, port)) {
      ++count;
      codes << q(f->code());
      const int rank = severityRank(f->severity());
      if (worst == nullptr || rank > severityRank(worst->severity()) ||
          (rank == severityRank(worst->severity()) &&
           core::findingSpecificity(f->code()) < core::findingSpecificity(worst->code())))
        worst = f;
    }
    codes.removeDuplicates();
    r.codes = internCodes(out, ids, codes);
    r.severity = worst != nullptr ? severityRank(worst->severity()) : 0;
    r.cells[Findings] = intern(out, ids, QString::number(count));
    r.sort[Findings] = count;
    r.cells[Verdict] = intern(out, ids,
                              n.unreachable_reason().empty() ? (worst != nullptr && r.severity >= 2
                                                                    ? q(worst->severity()).toUpper()
                                                                    : QStringLiteral("OK"))
                                                             : QStringLiteral("UNREACHABLE"));
    r.sort[Verdict] = n.unreachable_reason().empty() ? r.severity : 4;
    r.cells[WorstFinding] =
        intern(out, ids, worst != nullptr && r.severity >= 1 ? q(worst->code()) : QString());
    if (static_cast<std::size_t>(i) < job.signers.size()) {
      const SignerInfo& s = job.signers[static_cast<std::size_t>(i)];
      r.trusted = s.is_signed && s.is_node;
      r.cells[Signer] = intern(out, ids,
                               !s.is_signed ? tr("UNSIGNED")
                               : s.is_node  ? q(s.name) + (s.checked ? QString() : tr(" (no CA)"))
                                            : tr("%1: NOT the node").arg(q(s.name)));
    }
    if (busbw) {
      r.cells[Busbw] = intern(out, ids, QString::number(*busbw, 'f', 1));
      r.sort[Busbw] = *busbw;
    }
  };
  if (n.ports_size() == 0) {
    Row r;
    fill(r, "", 0);
    r.cells[State] = intern(out, ids,
                            n.unreachable_reason().empty() ? QStringLiteral("no RDMA port")
                                                           : QStringLiteral("did not answer"));
    out.rows.push_back(std::move(r));
    return;
  }
  for (int p = 0; p < n.ports_size(); ++p) {
    const auto& port = n.ports(p);
    Row r;
    fill(r, port.device(), port.port());
    r.port = p;
    r.cells[Device] = intern(out, ids, q(port.device()));
    r.cells[Port] = intern(out, ids, QString::number(port.port()));
    r.sort[Port] = port.port();
    r.cells[State] = intern(out, ids, q(port.state()));
    r.cells[PhysState] = intern(out, ids, q(port.phys_state()));
    r.cells[Rate] = intern(out, ids, q(port.rate()));  // core's one way of printing a rate
    r.sort[Rate] = port.rate_gbps();
    r.cells[LinkLayer] = intern(out, ids, q(port.link_layer()));
    r.cells[Firmware] = intern(out, ids, q(port.fw_ver()));
    r.cells[Function] =
        intern(out, ids, port.virtual_function() ? QStringLiteral("VF") : QString());
    if (snap == nullptr) {
      out.rows.push_back(std::move(r));
      continue;
    }
    const auto found = sources.find({port.device(), port.port()});
    addPortCounters(out, ids, r, found != sources.end() ? found->second : PortSources{}, interval,
                    key_ids);
    out.rows.push_back(std::move(r));
  }
}

// A port row's MTU and counters (the job's kept amounts: window deltas, else totals, for filters
// and top-X), the key counters' cells (per second over a window).
void NodeGridModel::addPortCounters(Prepared& out, Interned& ids, Row& r,
                                    const PortSources& sources, double interval,
                                    const KeyIds& key_ids) {
  std::optional<uint32_t> mtu = sources.netdev_mtu;
  if (!mtu && sources.port != nullptr && sources.port->has_active_mtu())
    mtu = sources.port->active_mtu();
  if (mtu) {
    r.cells[Mtu] = intern(out, ids, QString::number(*mtu));
    r.sort[Mtu] = *mtu;
  }
  r.counters = sources.counters;
  if (r.counters == nullptr) return;
  for (std::size_t k = 0; k < kKeyColumns.size(); ++k) {
    const std::optional<double> amount = r.counters->amount(key_ids[k]);
    if (!amount) continue;
    const double v = interval > 0 ? *amount / interval : *amount;
    r.sort[kKeyColumns[k]] = v;
    r.cells[kKeyColumns[k]] =
        intern(out, ids, interval > 0 ? formatAmount(v) + QStringLiteral("/s") : formatAmount(v));
  }
}

// The job's majorities and the cells that differ from them (core's rules for counters and
// busbw).
void NodeGridModel::judgeColumns(Prepared& out, const JobData& job, const KeyIds& key_ids) {
  // The job's majority per judged column: a value more than half of the port rows share.
  // Cells that differ are the outliers an engineer looks for first.
  for (int c : {State, PhysState, Rate, LinkLayer, Mtu, Firmware, Function}) {
    std::unordered_map<TextId, int> counts;
    int port_rows = 0;
    for (const auto& r : out.rows) {
      if (r.port < 0) continue;
      ++port_rows;
      ++counts[r.cells[c]];
    }
    TextId majority = 0;  // the empty text is no majority to differ from
    for (const auto& [value, count] : counts) {
      if (2 * count > port_rows) majority = value;
    }
    out.majority[c] = out.texts[majority];
    if (majority == 0 || port_rows < 2) continue;
    for (auto& r : out.rows) {
      if (r.port >= 0 && r.cells[c] != majority) r.outlier[c] = true;
    }
  }
  // Error counters, per port: marked by core's rule (markCounterOutliers, the one NODE_OUTLIER
  // and the charts apply per node). Counters are judged on what they counted (the window's delta,
  // else the total), whatever the cell shows (a rate); the majority shown is the cells' median.
  for (std::size_t k = 0; k < kKeyColumns.size(); ++k) {
    const int c = kKeyColumns[k];
    std::vector<double> values;
    std::vector<Row*> counted_rows;
    std::vector<double> shown;
    for (auto& r : out.rows) {
      if (const auto amount =
              r.counters != nullptr ? r.counters->amount(key_ids[k]) : std::optional<double>()) {
        values.push_back(*amount);
        counted_rows.push_back(&r);
      }
      if (!std::isnan(r.sort[c])) shown.push_back(r.sort[c]);
    }
    if (values.size() < 2) continue;
    out.majority[c] = formatAmount(core::medianOf(shown));
    const auto marks = core::markCounterOutliers(values);
    for (std::size_t i = 0; i < counted_rows.size(); ++i) {
      if (marks.outlier[i]) counted_rows[i]->outlier[c] = true;
    }
  }
  // Bus bandwidth is a node's: core's per-node marks (what NODE_OUTLIER judges and the chart
  // shows), on every row of the node; the majority shown is core's median node.
  const core::NodeOutliers busbw = core::nodeBusbwOutliers(busbwPeaks(job));
  if (busbw.judged() >= 2) {
    out.majority[Busbw] = QString::number(busbw.marks.median, 'f', 1);
    for (auto& r : out.rows) {
      if (busbw.outlier[static_cast<std::size_t>(r.node)]) r.outlier[Busbw] = true;
    }
  }
}

// What sorting, the summary and column sizing ask for, computed once.
void NodeGridModel::indexColumns(Prepared& out) {
  // Text columns sort by their rank in natural order (node2 before node10), computed here
  // once: sorting compares numbers only.
  static const QCollator collator = [] {
    QCollator c;
    c.setNumericMode(true);
    c.setCaseSensitivity(Qt::CaseInsensitive);
    return c;
  }();
  for (int c :
       {Node, Device, State, PhysState, LinkLayer, Firmware, Function, WorstFinding, Signer}) {
    std::vector<TextId> values;
    values.reserve(out.rows.size());
    for (const auto& r : out.rows) values.push_back(r.cells[c]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::sort(values.begin(), values.end(), [&out](TextId a, TextId b) {
      return collator.compare(out.texts[a], out.texts[b]) < 0;
    });
    std::unordered_map<TextId, double> rank;
    for (std::size_t k = 0; k < values.size(); ++k) rank.emplace(values[k], double(k));
    for (auto& r : out.rows) r.sort[c] = rank[r.cells[c]];
  }
  for (const auto& r : out.rows) {
    if (std::any_of(std::begin(r.outlier), std::end(r.outlier), [](bool b) { return b; }))
      ++out.outlier_rows;
  }
  for (int c = 0; c < ColumnCount; ++c) {
    out.empty_column[c] = std::all_of(out.rows.begin(), out.rows.end(),
                                      [c](const Row& r) { return r.cells[c] == 0; });
    // The longest text in each font (outliers are bold).
    for (int i = 0; i < static_cast<int>(out.rows.size()); ++i) {
      const Row& r = out.rows[static_cast<std::size_t>(i)];
      int& widest = out.widest_rows[c][r.outlier[c] ? 1 : 0];
      if (widest < 0 || out.texts[r.cells[c]].size() >
                            out.texts[out.rows[static_cast<std::size_t>(widest)].cells[c]].size())
        widest = i;
    }
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
    case RawValueRole: return cell(r, c);
    case SortRole: return std::isnan(r.sort[c]) ? QVariant() : QVariant(r.sort[c]);
    case SeverityRole: return r.severity;
    case OutlierRole: return r.outlier[c];
    case NodeIndexRole: return r.node;
    case CodesRole: return code_lists_[r.codes];
    case Qt::BackgroundRole:
      if (c == Verdict && r.severity >= 2) return QBrush(severityColor(r.severity));
      if (c == Verdict && cell(r, Verdict) == QLatin1String("UNREACHABLE"))
        return QBrush(severityColor(3));
      if (r.outlier[c]) return QBrush(QColor(0xff, 0xe0, 0x8a));
      if (c == Signer && !r.trusted && r.cells[Signer] != 0)
        return QBrush(severityColor(cell(r, Signer).startsWith(QLatin1String("UNSIGNED")) ? 2 : 3));
      return {};
    case Qt::FontRole:
      if (r.outlier[c] || (c == Verdict && r.severity >= 2)) {
        static const QFont bold = [] {
          QFont f;
          f.setBold(true);
          return f;
        }();
        return bold;
      }
      return {};
    case Qt::ToolTipRole:
      if (r.outlier[c]) {
        return tr("%1 differs from the job's majority (%2)")
            .arg(r.cells[c] == 0 ? tr("(empty)") : cell(r, c),
                 majority_[c].isEmpty() ? tr("empty") : majority_[c]);
      }
      if (c == WorstFinding || c == Findings)
        return code_lists_[r.codes].join(QStringLiteral(", "));
      return {};
    case Qt::TextAlignmentRole:
      if (c == Port || c == Rate || c == Mtu || c == Findings || c == Busbw ||
          (c >= SymbolErrors && c <= XmitWait))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default: return {};
  }
}

QVariant NodeGridModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    const char* counter = counterOfColumn(section);
    if (*counter != 0) {
      return has_window_ ? tr("%1 per second over the snapshot's window").arg(counter)
                         : tr("%1: total since the counters were last reset (the snapshots "
                              "have no window; take them with --window for rates)")
                               .arg(counter);
    }
    if (section == Busbw) return tr("Peak nccl-tests bus bandwidth of the node, GB/s");
    if (section == Mtu) return tr("MTU of the port's netdev (else the port's active MTU)");
    if (section == Signer)
      return tr(
          "Who signed the node's snapshot: its own agent certificate (the only signer "
          "the collector accepts), UNSIGNED, or another certificate (NOT the node)");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case Node: return tr("Node");
    case Device: return tr("Device");
    case Port: return tr("Port");
    case State: return tr("State");
    case PhysState: return tr("Phys state");
    case Rate: return tr("Rate");
    case LinkLayer: return tr("Link");
    case Mtu: return tr("MTU");
    case Firmware: return tr("Firmware");
    case Function: return tr("VF");
    case SymbolErrors: return has_window_ ? tr("Symbol err/s") : tr("Symbol err");
    case LinkDowned: return has_window_ ? tr("Link downed/s") : tr("Link downed");
    case RcvErrors: return has_window_ ? tr("Rcv err/s") : tr("Rcv err");
    case XmitDiscards: return has_window_ ? tr("Xmit discard/s") : tr("Xmit discard");
    case XmitWait: return has_window_ ? tr("Xmit wait/s") : tr("Xmit wait");
    case Busbw: return tr("Busbw GB/s");
    case Findings: return tr("Findings");
    case Verdict: return tr("Verdict");
    case WorstFinding: return tr("Worst finding");
    case Signer: return tr("Signed by");
    default: return {};
  }
}

int NodeGridModel::rowOf(int node_index, const QString& device, int port) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (r.node != node_index) continue;
    if (device.isEmpty() ||
        (cell(r, Device) == device && (port == 0 || cell(r, Port).toInt() == port)))
      return static_cast<int>(i);
  }
  return -1;
}

QString NodeGridModel::majority(Column column) const { return majority_[column]; }

std::optional<double> NodeGridModel::counter(int row, const QString& name) const {
  return counter(row, counterId(name.toStdString()));
}

std::optional<double> NodeGridModel::counter(int row, int id) const {
  if (id < 0 || row < 0 || row >= static_cast<int>(rows_.size())) return std::nullopt;
  const NodeCounters::Port* port = rows_[static_cast<std::size_t>(row)].counters;
  return port != nullptr ? port->amount(id) : std::nullopt;
}

}  // namespace ibc::console
