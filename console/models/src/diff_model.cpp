#include "ibc/console/diff_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "ibc/console/port_counters.h"
#include "ibc/console/units.h"
#include "ibc/core/node_metrics.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using core::Result;

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

// A fact shown as words: compared by `rank` when given (a state's order), else as text.
Fact wordFact(QString section, QString field, QString value, std::optional<int> rank = {}) {
  Fact f;
  f.section = std::move(section);
  f.field = std::move(field);
  f.value = std::move(value);
  f.rank = rank;
  return f;
}

// A fact with a number: `more_is` +1 when more is better, 0 when neither; shown as `shown`
// when given, else the number with `unit`.
Fact numberFact(QString section, QString field, double number, int more_is, QString unit = {},
                QString shown = {}) {
  Fact f = wordFact(std::move(section), std::move(field),
                    shown.isEmpty() ? withUnit(number, unit) : std::move(shown));
  f.number = number;
  f.more_is = more_is;
  f.unit = std::move(unit);
  return f;
}

// A counter's amount, formatted only when a row shows it (in the counter's unit).
Fact counterFact(QString section, QString field, double amount, const std::string& counter) {
  Fact f = wordFact(std::move(section), std::move(field), QString());
  f.number = amount;
  f.more_is = isTrafficCounter(counter) ? 0 : -1;
  f.counter = counter;
  return f;
}

// A fact that is text only (no value to compare), when there is text.
void addText(std::vector<Fact>& out, const QString& section, const QString& field,
             const std::string& value) {
  if (!value.empty()) out.push_back(wordFact(section, field, q(value)));
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
    out.push_back(numberFact(host, QStringLiteral("memlock"),
                             static_cast<double>(snap.host().memlock_soft_bytes()), 1));
  }
  out.push_back(wordFact(host, QStringLiteral("verdict"), q(node.worst_severity()),
                         3 - severityRank(node.worst_severity())));
  // nccl-tests: the peak bus bandwidth over all sizes, in and out of place (core's value,
  // the one NODE_OUTLIER judges).
  if (const std::optional<double> busbw = core::peakBusbwGbs(snap)) {
    out.push_back(numberFact(QStringLiteral("nccl-tests"), QStringLiteral("peak busbw"), *busbw, 1,
                             QStringLiteral(" GB/s")));
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
  out.push_back(wordFact(where, QStringLiteral("state"), q(port.state()), stateRank(port.state())));
  out.push_back(wordFact(where, QStringLiteral("phys state"), q(port.phys_state()),
                         physRank(port.phys_state())));
  if (port.rate_gbps() > 0) {
    // core's one way of printing a rate, compared by its number
    out.push_back(numberFact(where, QStringLiteral("rate"), port.rate_gbps(), 1,
                             QStringLiteral(" Gb/s"), q(port.rate())));
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
    const bool device_wide = c.group == QStringLiteral("device hw_counters");
    auto [name, fresh] = fields.try_emplace(device_wide ? "device " + c.name : c.name);
    if (fresh) name->second = q(name->first);
    const QString& field = name->second;
    if (const auto amount = c.amount()) {
      out.push_back(counterFact(where, field, *amount, c.name));
    } else {
      out.push_back(wordFact(where, field, QStringLiteral("unavailable: ") + q(c.unavailable)));
    }
  }
}

}  // namespace

QString shownValue(const Fact& fact) {
  if (!fact.value.isEmpty() || !fact.number) return fact.value;
  return fact.counter.empty() ? number(*fact.number) : q(formatCounter(fact.counter, *fact.number));
}

Result<std::vector<Fact>> factsOf(const JobData& job, int node_index) {
  auto whole = readFullSnapshot(job, node_index);
  if (!whole.ok()) return whole.error();
  return factsOf(job, node_index, *whole);
}

std::vector<Fact> factsOf(const JobData& job, int node_index, const v1::Snapshot& snap) {
  std::vector<Fact> out;
  if (node_index < 0 || node_index >= job.report.nodes_size()) return out;
  const auto& node = job.report.nodes(node_index);
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
    out.push_back(wordFact(QStringLiteral("findings"), field, q(f.severity()),
                           3 - severityRank(f.severity())));
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

namespace {

bool sameKey(const Fact& a, const Fact& b) { return a.field == b.field && a.section == b.section; }

// The row of a fact only the left has (`right_is_majority`: the right is the job's majority).
DiffModel::Row onlyLeft(const Fact& l, bool right_is_majority) {
  using Direction = DiffModel::Direction;
  DiffModel::Row r{l.section, l.field, shownValue(l), QString(), QString(), Direction::OnlyLeft};
  // A finding only on the left is the left being worse; anything else only exists there.
  if (l.section == QStringLiteral("findings")) {
    r.direction = Direction::Worse;
    r.right = QStringLiteral("(none)");
    r.change = QStringLiteral("new finding");
  } else {
    r.change = right_is_majority ? QStringLiteral("most nodes lack it")
                                 : QStringLiteral("only on the left");
  }
  return r;
}

DiffModel::Row onlyRight(const Fact& r, bool right_is_majority) {
  using Direction = DiffModel::Direction;
  DiffModel::Row row{r.section, r.field, QString(), shownValue(r), QString(), Direction::OnlyRight};
  if (r.section == QStringLiteral("findings")) {
    row.direction = Direction::Better;
    row.left = QStringLiteral("(none)");
    row.change = QStringLiteral("finding gone");
  } else {
    row.change =
        right_is_majority ? QStringLiteral("missing here") : QStringLiteral("only on the right");
  }
  return row;
}

// A row when the two values of one key differ.
void addChange(const Fact& l, const Fact& r, std::vector<DiffModel::Row>& rows) {
  using Direction = DiffModel::Direction;
  // Numbers by their value: a shown "3.91 GiB" hides a change of a few bytes.
  if (l.number && r.number ? *l.number == *r.number : l.value == r.value) return;
  DiffModel::Row row{l.section,     l.field,   shownValue(l),
                     shownValue(r), QString(), Direction::Changed};
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

}  // namespace

std::vector<DiffModel::Row> DiffModel::diff(const std::vector<Fact>& left,
                                            const std::vector<Fact>& right,
                                            bool right_is_majority) {
  std::vector<Row> rows;
  // Facts come in one stable order (factsOf), so two nodes of one layout match position by
  // position: walked in step while they do, by key only for the rest.
  std::size_t same = 0;
  while (same < left.size() && same < right.size() && sameKey(left[same], right[same])) {
    addChange(left[same], right[same], rows);
    ++same;
  }
  // The rest by key. A key a node has twice (two findings of one code and place) pairs in
  // order: the first with the first, the second with the second.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::unordered_map<FactKey, std::pair<std::size_t, std::size_t>, FactKeyHash> by_key;
  std::vector<std::size_t> next(right.size(), kNone);  // the next position of the same key
  by_key.reserve(right.size() - same);
  for (std::size_t i = same; i < right.size(); ++i) {
    auto [it, fresh] = by_key.try_emplace(key(right[i]), i, i);  // unpaired head, tail
    if (!fresh) {
      next[it->second.second] = i;
      it->second.second = i;
    }
  }
  std::vector<char> paired(right.size(), 0);
  for (std::size_t i = same; i < left.size(); ++i) {
    const auto it = by_key.find(key(left[i]));
    if (it == by_key.end() || it->second.first == kNone) {
      rows.push_back(onlyLeft(left[i], right_is_majority));
      continue;
    }
    const std::size_t r = it->second.first;
    it->second.first = next[r];
    paired[r] = 1;
    addChange(left[i], right[r], rows);
  }
  for (std::size_t i = same; i < right.size(); ++i) {
    if (paired[i] == 0) rows.push_back(onlyRight(right[i], right_is_majority));
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
  error_.clear();
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
  auto l = factsOf(*job, left);
  auto r = l.ok() ? factsOf(*job, right) : Result<std::vector<Fact>>(l.error());
  if (!r.ok()) {
    clear();
    error_ = q(r.error().message);
    return;
  }
  setRows(diff(*l, *r, false), q(job->report.nodes(left).label()),
          q(job->report.nodes(right).label()));
}

namespace {

// Per key: how many nodes have each value (few distinct values per key: a short list, not a
// map per key — a node may have a million facts), and the numbers for a median.
struct MajorityValue {
  QString text;
  int count = 0;
  std::optional<int> rank;
};
struct Votes {
  Fact first;
  std::vector<MajorityValue> values;
  std::vector<double> numbers;
  int nodes = 0;
  int last_node = -1;  // the node that voted last (a node votes once per slot)
};

// The slots the nodes vote in: one per key and occurrence (a key a node has twice takes two
// slots, as DiffModel::diff pairs them). A node's facts come in the order of the first node's
// when their layouts match, so a cursor finds the slot without hashing; keys are hashed only
// from the first mismatch on.
class Ballot {
 public:
  Votes& slotFor(const Fact& f, int node) {
    if (cursor_ < votes_.size() && votes_[cursor_].last_node != node &&
        sameKey(votes_[cursor_].first, f)) {
      return take(cursor_++, node);
    }
    if (node == 0) return append(f, node);  // the first node lays the slots out
    indexAll();
    const auto it = index_.find(key(f));
    if (it != index_.end()) {
      for (const std::size_t slot : it->second) {
        if (votes_[slot].last_node == node) continue;
        cursor_ = slot + 1;
        return take(slot, node);
      }
    }
    return append(f, node);
  }
  void nextNode() { cursor_ = 0; }
  std::vector<Votes>& votes() { return votes_; }
  void reserve(std::size_t n) { votes_.reserve(n); }

 private:
  Votes& take(std::size_t slot, int node) {
    votes_[slot].last_node = node;
    return votes_[slot];
  }
  Votes& append(const Fact& f, int node) {
    votes_.push_back({f, {}, {}, 0, node});
    if (indexing_) index_[key(f)].push_back(indexed_++);
    return votes_.back();
  }
  void indexAll() {
    indexing_ = true;
    for (; indexed_ < votes_.size(); ++indexed_) {
      index_[key(votes_[indexed_].first)].push_back(indexed_);
    }
  }

  std::vector<Votes> votes_;
  std::unordered_map<FactKey, std::vector<std::size_t>, FactKeyHash> index_;
  std::size_t indexed_ = 0;  // votes_[0, indexed_) are in index_
  bool indexing_ = false;    // from the first mismatch on, every slot is indexed
  std::size_t cursor_ = 0;
};

}  // namespace

Majority majorityFacts(const JobData& job) {
  Ballot ballot;
  Majority out;
  // One node's whole snapshot at a time, read again from its file (the job keeps them slim).
  for (int i = 0; i < job.report.nodes_size(); ++i) {
    auto whole = readFullSnapshot(job, i);
    if (!whole.ok()) {
      if (out.unread++ == 0) out.first_error = whole.error().message;
      continue;
    }
    const int voter = out.voters++;
    std::vector<Fact> facts = factsOf(job, i, *whole);
    if (voter == 0) ballot.reserve(facts.size());
    ballot.nextNode();
    for (auto& f : facts) {
      Votes& v = ballot.slotFor(f, voter);
      ++v.nodes;
      if (f.number) {
        v.numbers.push_back(*f.number);
        if (f.value.isEmpty()) continue;  // a counter: judged by its numbers alone
      }
      auto same = std::find_if(v.values.begin(), v.values.end(),
                               [&](const MajorityValue& x) { return x.text == f.value; });
      if (same == v.values.end()) {
        v.values.push_back({f.value, 1, f.rank});
      } else {
        ++same->count;
        same->rank = f.rank;
      }
    }
  }
  const int n = out.voters;
  std::vector<Votes>& votes = ballot.votes();
  std::vector<Fact>& majority = out.facts;
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
      const auto best = std::max_element(
          v.values.begin(), v.values.end(), [](const MajorityValue& a, const MajorityValue& b) {
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
  return out;
}

void DiffModel::compareWithMajority(const JobData* job, int node) {
  if (job == nullptr) {
    clear();
    return;
  }
  compareWithMajority(job, node, majorityFacts(*job));
}

void DiffModel::compareWithMajority(const JobData* job, int node, const Majority& majority) {
  if (job == nullptr || node < 0 || node >= job->report.nodes_size()) {
    clear();
    return;
  }
  auto facts = factsOf(*job, node);
  if (!facts.ok()) {
    clear();
    error_ = q(facts.error().message);
    return;
  }
  // The node's own facts that only a minority share stay "only left" rows.
  setRows(diff(*facts, majority.facts, true), q(job->report.nodes(node).label()),
          tr("majority of %1 nodes").arg(majority.voters));
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
