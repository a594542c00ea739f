#include "ibc/console/diff_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ibc/console/port_counters.h"
#include "ibc/console/units.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// Higher is healthier. Unknown states rank below DOWN: an unreadable state is no better.
int stateRank(const std::string& state) {
  if (state.find("ACTIVE") != std::string::npos) return 4;
  if (state.find("ARMED") != std::string::npos) return 3;
  if (state.find("INIT") != std::string::npos) return 2;
  if (state.find("DOWN") != std::string::npos) return 1;
  return 0;
}

int physRank(const std::string& phys) {
  if (phys.find("LinkUp") != std::string::npos) return 2;
  if (phys.empty()) return 0;
  return 1;
}

QString number(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)))
    return QString::number(static_cast<int64_t>(v));
  return QString::number(v, 'g', 6);
}

// A rate or bandwidth with its unit: a whole number as it is (200 Gb/s), else one decimal
// (335.4 GB/s).
QString withUnit(double v, const QString& unit) {
  return (v == std::floor(v) ? QString::number(static_cast<int64_t>(v))
                             : QString::number(v, 'f', 1)) +
         unit;
}

// A fact's key: its section and field (shared strings, no new allocation per fact).
using FactKey = std::pair<QString, QString>;
FactKey key(const Fact& f) { return {f.section, f.field}; }
struct FactKeyHash {
  std::size_t operator()(const FactKey& k) const {
    return qHash(k.first) * 1000003u ^ qHash(k.second);
  }
};

}  // namespace

namespace {

// A fact that is text only (no value to compare), when there is text.
void addText(std::vector<Fact>& out, const QString& section, const QString& field,
             const std::string& value) {
  if (!value.empty()) out.push_back({section, field, q(value), std::nullopt, std::nullopt, 0});
}

// The host's facts: kernel, rdma-core, OFED, memlock, the verdict, nccl-tests' peak busbw.
void addHostFacts(std::vector<Fact>& out, const v1::NodeReport& node, const v1::Snapshot& snap) {
  const QString host = QStringLiteral("host");
  addText(out, host, QStringLiteral("kernel"), snap.node().kernel());
  addText(out, host, QStringLiteral("rdma-core"), snap.host().rdma_core_version());
  addText(out, host, QStringLiteral("OFED"), snap.host().ofed_version());
  if (snap.host().memlock_unlimited()) {
    addText(out, host, QStringLiteral("memlock"), "unlimited");
  } else if (snap.host().has_memlock_soft_bytes()) {
    out.push_back({host, QStringLiteral("memlock"),
                   number(static_cast<double>(snap.host().memlock_soft_bytes())),
                   static_cast<double>(snap.host().memlock_soft_bytes()), std::nullopt, 1});
  }
  out.push_back({host, QStringLiteral("verdict"), q(node.worst_severity()), std::nullopt,
                 3 - severityRank(node.worst_severity()), 0});
  // nccl-tests: the peak bus bandwidth over all sizes, in and out of place.
  std::optional<double> busbw;
  for (const auto& t : snap.nccl_tests()) {
    for (const auto& r : t.parsed().rows())
      busbw = std::max(busbw.value_or(0), std::max(r.oop_busbw_gbs(), r.ip_busbw_gbs()));
  }
  if (busbw) {
    out.push_back({QStringLiteral("nccl-tests"),
                   QStringLiteral("peak busbw"),
                   withUnit(*busbw, QStringLiteral(" GB/s")),
                   busbw,
                   std::nullopt,
                   1,
                   {},
                   QStringLiteral(" GB/s")});
  }
}

// One port's facts: state, rate, link, firmware, netdevs, MTU and every counter. `sysfs` is
// the snapshot's port (nullptr when it has none by that name).
// Counter fields by counter and group, made once per node (every port repeats the names).
using FieldNames = std::unordered_map<std::string, QString>;

void addPortFacts(std::vector<Fact>& out, const v1::PortSummary& port,
                  const core::CounterWindowIndex& window, const v1::RdmaDevice* device,
                  const v1::RdmaPort* sysfs, FieldNames& fields) {
  const QString where = q(port.device()) + QLatin1Char('/') + QString::number(port.port());
  out.push_back(
      {where, QStringLiteral("state"), q(port.state()), std::nullopt, stateRank(port.state()), 0});
  out.push_back({where, QStringLiteral("phys state"), q(port.phys_state()), std::nullopt,
                 physRank(port.phys_state()), 0});
  if (port.rate_gbps() > 0) {
    // core's one way of printing a rate, compared by its number
    out.push_back({where,
                   QStringLiteral("rate"),
                   q(port.rate()),
                   port.rate_gbps(),
                   std::nullopt,
                   1,
                   {},
                   QStringLiteral(" Gb/s")});
  } else {
    addText(out, where, QStringLiteral("rate"), port.rate());
  }
  addText(out, where, QStringLiteral("link layer"), port.link_layer());
  addText(out, where, QStringLiteral("firmware"), port.fw_ver());
  std::string netdevs;
  for (const auto& nd : port.netdevs()) netdevs += (netdevs.empty() ? "" : ",") + nd;
  addText(out, where, QStringLiteral("netdevs"), netdevs);
  if (sysfs == nullptr) return;
  if (sysfs->has_active_mtu())
    addText(out, where, QStringLiteral("MTU"), std::to_string(sysfs->active_mtu()));
  for (const auto& c : portCounters(window, *device, *sysfs)) {
    const QString field = c.group == QStringLiteral("device hw_counters")
                              ? QStringLiteral("device ") + q(c.name)
                              : q(c.name);
    if (const auto amount = c.amount()) {
      out.push_back({where, field, QString(), amount, std::nullopt,
                     isTrafficCounter(c.name) ? 0 : -1, c.name});
    } else {
      out.push_back({where, field, QStringLiteral("unavailable: ") + q(c.unavailable), std::nullopt,
                     std::nullopt, 0});
    }
  }
}

}  // namespace

QString shownValue(const Fact& fact) {
  if (!fact.value.isEmpty() || !fact.number) return fact.value;
  return fact.counter.empty() ? number(*fact.number) : q(formatCounter(fact.counter, *fact.number));
}

std::vector<Fact> factsOf(const JobData& job, int node_index) {
  std::vector<Fact> out;
  if (node_index < 0 || node_index >= job.report.nodes_size() ||
      node_index >= static_cast<int>(job.snapshots.size()))
    return out;
  const auto& node = job.report.nodes(node_index);
  const auto& snap = job.snapshots[static_cast<std::size_t>(node_index)];
  addHostFacts(out, node, snap);
  // The snapshot's ports by device and number, indexed once (a node may have thousands).
  std::map<std::pair<std::string, uint32_t>, std::pair<const v1::RdmaDevice*, const v1::RdmaPort*>>
      ports;
  for (const auto& d : snap.devices()) {
    for (const auto& p : d.ports())
      ports.emplace(std::make_pair(d.name(), p.port()), std::make_pair(&d, &p));
  }
  const core::CounterWindowIndex window(snap);
  FieldNames fields;
  for (const auto& port : node.ports()) {
    const auto found = ports.find({port.device(), port.port()});
    const bool known = found != ports.end();
    addPortFacts(out, port, window, known ? found->second.first : nullptr,
                 known ? found->second.second : nullptr, fields);
  }
  // Findings: one fact per code and place, valued by severity (present is worse than absent).
  for (const int i : findingsOfNode(job, node_index)) {
    const auto& f = job.report.findings(i);
    QString where = q(f.device());
    if (f.port() != 0) where += QLatin1Char('/') + QString::number(f.port());
    const QString field = where.isEmpty() ? q(f.code()) : q(f.code()) + " on " + where;
    out.push_back({QStringLiteral("findings"), field, q(f.severity()), std::nullopt,
                   3 - severityRank(f.severity()), 0});
  }
  return out;
}

QString directionName(DiffModel::Direction direction) {
  switch (direction) {
    case DiffModel::Direction::Worse: return QStringLiteral("worse");
    case DiffModel::Direction::Better: return QStringLiteral("better");
    case DiffModel::Direction::Changed: return QStringLiteral("changed");
    case DiffModel::Direction::OnlyLeft: return QStringLiteral("only left");
    case DiffModel::Direction::OnlyRight: return QStringLiteral("only right");
  }
  return {};
}

DiffModel::DiffModel(QObject* parent) : QAbstractTableModel(parent) {}

std::vector<DiffModel::Row> DiffModel::diff(const std::vector<Fact>& left,
                                            const std::vector<Fact>& right,
                                            bool right_is_majority) {
  std::unordered_map<FactKey, const Fact*, FactKeyHash> by_key;
  by_key.reserve(right.size());
  for (const auto& f : right) by_key.emplace(key(f), &f);
  std::vector<Row> rows;
  std::unordered_set<FactKey, FactKeyHash> seen;
  seen.reserve(left.size());
  for (const auto& l : left) {
    FactKey k = key(l);
    auto it = by_key.find(k);
    seen.insert(std::move(k));
    if (it == by_key.end()) {
      // A finding only on the left is the left being worse; anything else only exists there.
      Row r{l.section, l.field, shownValue(l), QString(), QString(), Direction::OnlyLeft};
      if (l.section == QStringLiteral("findings")) {
        r.direction = Direction::Worse;
        r.right = QStringLiteral("(none)");
        r.change = QStringLiteral("new finding");
      } else {
        r.change = right_is_majority ? QStringLiteral("most nodes lack it")
                                     : QStringLiteral("only on the left");
      }
      rows.push_back(std::move(r));
      continue;
    }
    const Fact& r = *it->second;
    // Numbers by their value: a shown "3.91 GiB" hides a change of a few bytes.
    if (l.number && r.number ? *l.number == *r.number : l.value == r.value) continue;
    Row row{l.section, l.field, shownValue(l), shownValue(r), QString(), Direction::Changed};
    if (l.number && r.number) {
      const double d = *l.number - *r.number;
      row.change = (d > 0 ? QStringLiteral("+") : QString()) +
                   (!l.counter.empty()  ? q(formatCounter(l.counter, d))
                    : !l.unit.isEmpty() ? withUnit(d, l.unit)
                                        : number(d));
      if (l.more_is != 0)
        row.direction = (d > 0) == (l.more_is > 0) ? Direction::Better : Direction::Worse;
    } else if (l.rank && r.rank && *l.rank != *r.rank) {
      row.direction = *l.rank < *r.rank ? Direction::Worse : Direction::Better;
      row.change = directionName(row.direction);
    } else {
      row.change = QStringLiteral("changed");
    }
    rows.push_back(std::move(row));
  }
  for (const auto& r : right) {
    if (seen.count(key(r)) != 0) continue;
    Row row{r.section, r.field, QString(), shownValue(r), QString(), Direction::OnlyRight};
    if (r.section == QStringLiteral("findings")) {
      row.direction = Direction::Better;
      row.left = QStringLiteral("(none)");
      row.change = QStringLiteral("finding gone");
    } else {
      row.change =
          right_is_majority ? QStringLiteral("missing here") : QStringLiteral("only on the right");
    }
    rows.push_back(std::move(row));
  }
  // Worst first, then by place, so the first screen holds what matters.
  auto weight = [](Direction d) {
    switch (d) {
      case Direction::Worse: return 0;
      case Direction::OnlyLeft: return 1;
      case Direction::OnlyRight: return 2;
      case Direction::Changed: return 3;
      case Direction::Better: return 4;
    }
    return 5;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (weight(a.direction) != weight(b.direction))
      return weight(a.direction) < weight(b.direction);
    return a.section < b.section;
  });
  return rows;
}

void DiffModel::setRows(std::vector<Row> rows, QString left_name, QString right_name) {
  beginResetModel();
  rows_ = std::move(rows);
  left_name_ = std::move(left_name);
  right_name_ = std::move(right_name);
  endResetModel();
}

void DiffModel::clear() { setRows({}, {}, {}); }

void DiffModel::compareNodes(const JobData* job, int left, int right) {
  if (job == nullptr || left < 0 || right < 0 || left >= job->report.nodes_size() ||
      right >= job->report.nodes_size()) {
    clear();
    return;
  }
  setRows(diff(factsOf(*job, left), factsOf(*job, right), false),
          q(job->report.nodes(left).label()), q(job->report.nodes(right).label()));
}

std::vector<Fact> majorityFacts(const JobData& job) {
  // Per key: how many nodes have each value (few distinct values per key: a short list, not
  // a map per key — a node may have a million facts), and the numbers for a median.
  struct Value {
    QString text;
    int count = 0;
    std::optional<int> rank;
  };
  struct Votes {
    Fact first;
    std::vector<Value> values;
    std::vector<double> numbers;
    int nodes = 0;
  };
  std::unordered_map<FactKey, std::size_t, FactKeyHash> index;  // key -> votes
  std::vector<Votes> votes;
  const int n = job.report.nodes_size();
  for (int i = 0; i < n; ++i) {
    std::vector<Fact> facts = factsOf(job, i);
    if (i == 0) {
      index.reserve(facts.size());
      votes.reserve(facts.size());
    }
    for (auto& f : facts) {
      auto [it, fresh] = index.try_emplace(key(f), votes.size());
      if (fresh) votes.push_back({f, {}, {}, 0});
      Votes& v = votes[it->second];
      ++v.nodes;
      if (f.number) {
        v.numbers.push_back(*f.number);
        if (f.value.isEmpty()) continue;  // a counter: judged by its numbers alone
      }
      auto same = std::find_if(v.values.begin(), v.values.end(),
                               [&](const Value& x) { return x.text == f.value; });
      if (same == v.values.end()) {
        v.values.push_back({f.value, 1, f.rank});
      } else {
        ++same->count;
        same->rank = f.rank;
      }
    }
  }
  std::vector<Fact> majority;
  majority.reserve(votes.size());
  for (auto& v : votes) {            // in the order keys first appeared
    if (2 * v.nodes <= n) continue;  // most nodes do not have it: no majority to compare with
    Fact f = v.first;
    // Numbers where most nodes have one (a counter unreadable on a few is still judged).
    if (2 * v.numbers.size() > static_cast<std::size_t>(v.nodes)) {
      const double m = core::medianOf(std::move(v.numbers));
      f.number = m;
      f.value = f.counter.empty() ? number(m) : QString();  // a counter's: shownValue
      if (!f.unit.isEmpty()) f.value = withUnit(m, f.unit);
    } else if (!v.values.empty()) {
      const auto best =
          std::max_element(v.values.begin(), v.values.end(), [](const Value& a, const Value& b) {
            return a.count != b.count ? a.count < b.count : a.text > b.text;
          });
      f.value = best->text;
      f.number.reset();
      f.rank = best->rank;
    } else {
      continue;
    }
    majority.push_back(std::move(f));
  }
  return majority;
}

void DiffModel::compareWithMajority(const JobData* job, int node) {
  if (job == nullptr) {
    clear();
    return;
  }
  compareWithMajority(job, node, majorityFacts(*job));
}

void DiffModel::compareWithMajority(const JobData* job, int node,
                                    const std::vector<Fact>& majority) {
  if (job == nullptr || node < 0 || node >= job->report.nodes_size()) {
    clear();
    return;
  }
  // The node's own facts that only a minority share stay "only left" rows.
  setRows(diff(factsOf(*job, node), majority, true), q(job->report.nodes(node).label()),
          tr("majority of %1 nodes").arg(job->report.nodes_size()));
}

int DiffModel::worseCount() const {
  return static_cast<int>(std::count_if(
      rows_.begin(), rows_.end(), [](const Row& r) { return r.direction == Direction::Worse; }));
}

int DiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int DiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const Row& r = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::DisplayRole || role == SortRole) {
    switch (index.column()) {
      case Section: return r.section;
      case Field: return r.field;
      case Left: return r.left;
      case Right: return r.right;
      case Change: return r.change;
      default: return {};
    }
  }
  if (role == DirectionRole) return static_cast<int>(r.direction);
  if (role == Qt::ForegroundRole && index.column() >= Left) {
    switch (r.direction) {
      case Direction::Worse: return QBrush(QColor(0xb0, 0x00, 0x20));
      case Direction::Better: return QBrush(QColor(0x10, 0x70, 0x30));
      default: return {};
    }
  }
  if (role == Qt::BackgroundRole && r.direction == Direction::Worse)
    return QBrush(QColor(0xfd, 0xe4, 0xe4));
  if (role == Qt::ToolTipRole) return tr("%1: %2").arg(directionName(r.direction), r.change);
  return {};
}

QVariant DiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Section: return tr("Where");
    case Field: return tr("What");
    case Left: return left_name_.isEmpty() ? tr("Left") : left_name_;
    case Right: return right_name_.isEmpty() ? tr("Right") : right_name_;
    case Change: return tr("Change");
    default: return {};
  }
}

}  // namespace ibc::console
