#include "pages/node_page.h"

#include "ibc/console/job_loader.h"

#include <algorithm>

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextBlock>
#include <QVBoxLayout>

#include "ibc/console/counters_model.h"
#include "ibc/console/job_data.h"
#include "widgets/filter_edit.h"
#include "widgets/table_copy.h"

namespace ibc::console {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString mib(uint64_t bytes) { return QString::number(bytes >> 20) + QStringLiteral(" MiB"); }

}  // namespace

NodePage::NodePage(QWidget* parent) : Page(parent) {
  facts_ = new QLabel(this);
  facts_->setWordWrap(true);
  facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  ports_ = new QComboBox(this);
  counters_ = new CountersModel(this);
  auto* sorted = new CountersFilter(this);
  sorted->setSourceModel(counters_);
  counters_filter_ = sorted;
  filter_ = new FilterEdit(tr("Filter counters: name glob (*err*), group=hw_counters, total>0, "
                              "delta>0, rate>=1"),
                           this);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    counters_filter_->setFilterText(text);
    filter_->setError(counters_filter_->filterError());
  });
  empty_ =
      new QLabel(tr("This port has no counters in the snapshot (the capture held none)."), this);
  empty_->setVisible(false);
  counters_view_ = new QTableView(this);
  counters_view_->setModel(sorted);
  counters_view_->setSortingEnabled(true);
  // The model's order (trouble first) until the engineer sorts by a column.
  counters_view_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  counters_view_->verticalHeader()->hide();
  counters_view_->verticalHeader()->setDefaultSectionSize(counters_view_->fontMetrics().height() +
                                                          6);
  counters_view_->horizontalHeader()->setStretchLastSection(true);
  counters_view_->setAlternatingRowColors(true);
  counters_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  addCopyAction(counters_view_);
  logs_ = new QPlainTextEdit(this);
  logs_->setReadOnly(true);
  logs_->setLineWrapMode(QPlainTextEdit::NoWrap);
  logs_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  auto* port_bar = new QHBoxLayout;
  port_bar->addWidget(new QLabel(tr("Port:"), this));
  port_bar->addWidget(ports_, 1);
  port_bar->addWidget(filter_, 1);
  auto* top = new QWidget(this);
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addLayout(port_bar);
  top_layout->addWidget(empty_);
  top_layout->addWidget(counters_view_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(logs_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(facts_);
  layout->addWidget(split, 1);

  connect(ports_, &QComboBox::currentIndexChanged, this, [this] { showPort(); });
}

void NodePage::setJob(const JobData* job) {
  job_ = job;
  showNode(job != nullptr && job->report.nodes_size() > 0 ? 0 : -1, {}, 0);
}

void NodePage::showNode(int node_index, const QString& device, int port) {
  node_ = node_index;
  QSignalBlocker block(ports_);
  ports_->clear();
  logs_->clear();
  if (job_ == nullptr || node_ < 0 || node_ >= job_->report.nodes_size() ||
      node_ >= static_cast<int>(job_->snapshots.size())) {
    facts_->setText(tr("No node selected."));
    counters_->setPort(nullptr, {}, 0);
    whole_.reset();
    return;
  }
  const auto& n = job_->report.nodes(node_);
  // Counters, kernel log and NCCL logs are read from the node's file, once per node shown.
  auto whole = readFullSnapshot(*job_, node_);
  whole_error_ = whole.ok() ? QString() : q(whole.error().message);
  if (whole.ok()) {
    whole_ = std::move(*whole);
  } else {
    whole_.reset();
  }
  facts_->setText(factsOf(node_));

  // The port asked for, else the node's worst (worst first, issue 22).
  int current = std::max(0, worstPort(n));
  for (int p = 0; p < n.ports_size(); ++p) {
    const auto& ps = n.ports(p);
    ports_->addItem(QStringLiteral("%1 port %2  (%3, %4, %5)")
                        .arg(q(ps.device()))
                        .arg(ps.port())
                        .arg(q(ps.state()), q(ps.rate()), q(ps.link_layer())),
                    QVariant::fromValue(p));
    if (q(ps.device()) == device && static_cast<int>(ps.port()) == port) current = p;
  }
  ports_->setCurrentIndex(current);
  showPort();

  showLogs();
}

QString NodePage::factsOf(int node) const {
  const auto& n = job_->report.nodes(node);
  const auto snap = job_->snapshots[static_cast<std::size_t>(node)];
  const auto& id = snap.node();
  QStringList facts;
  facts << QStringLiteral("<b>%1</b>").arg(q(n.label()).toHtmlEscaped());
  facts << tr("verdict %1 (%2 critical, %3 warning, %4 info)")
               .arg(q(n.worst_severity()).toUpper())
               .arg(n.critical())
               .arg(n.warning())
               .arg(n.info());
  if (!id.kernel().empty()) facts << tr("kernel %1").arg(q(id.kernel()).toHtmlEscaped());
  if (id.virtual_machine())
    facts << tr("virtual machine (%1)").arg(q(id.virtualization_evidence()).toHtmlEscaped());
  if (snap.host().memlock_unlimited())
    facts << tr("memlock unlimited");
  else if (snap.host().has_memlock_soft_bytes())
    facts << tr("memlock %1").arg(mib(snap.host().memlock_soft_bytes()));
  if (!n.snapshot_file().empty()) facts << tr("from %1").arg(q(n.snapshot_file()).toHtmlEscaped());
  if (node < static_cast<int>(job_->trust.size())) {
    const QString trust = q(job_->trust[static_cast<std::size_t>(node)]).toHtmlEscaped();
    facts << (trust.startsWith(QLatin1String("UNSIGNED")) || trust.contains(QLatin1String("NOT"))
                  ? QStringLiteral("<b>%1</b>").arg(trust)
                  : trust);
  }
  if (n.probe_errors() > 0) facts << tr("%1 probe(s) failed").arg(n.probe_errors());
  return facts.join(QStringLiteral(" &middot; "));
}

void NodePage::showLogs() {
  // Kernel log and NCCL log lines; those a finding of this node quotes are highlighted and
  // the first of them is scrolled to.
  QStringList evidence;
  for (const int k : findingsOfNode(*job_, node_)) {  // the job's index, not every finding
    for (const auto& e : job_->report.findings(k).evidence()) evidence << q(e);
  }
  QStringList lines;
  if (!whole_) {
    lines << tr("== kernel log and NCCL log(s) not shown: %1").arg(whole_error_);
  } else {
    const auto& snap = *whole_;
    if (snap.kernel_log().lines_size() > 0)
      lines << tr("== kernel log (%1)").arg(q(snap.kernel_log().source()));
    for (const auto& l : snap.kernel_log().lines()) lines << q(l.timestamp() + " " + l.text());
    for (const auto& log : snap.nccl_logs()) {
      lines << tr("== NCCL log %1").arg(q(log.source()));
      lines << q(log.raw()).split(QLatin1Char('\n'));
    }
  }
  if (lines.isEmpty()) {
    lines << tr(
        "(this snapshot holds no RDMA kernel log lines and no NCCL log: "
        "`ibcollect snapshot --dmesg-file`, `--nccl-log` add them)");
  }
  logs_->setPlainText(lines.join(QLatin1Char('\n')));
  QList<QTextEdit::ExtraSelection> marks;
  int first = -1;
  QTextBlock block_it = logs_->document()->firstBlock();
  for (int i = 0; block_it.isValid(); ++i, block_it = block_it.next()) {
    const QString text = block_it.text().trimmed();
    if (text.size() < 12 || text.startsWith(QLatin1String("=="))) continue;
    bool quoted = false;
    for (const QString& e : evidence) {
      if (e.contains(text.right(std::min<qsizetype>(text.size(), 80)))) {
        quoted = true;
        break;
      }
    }
    if (!quoted) continue;
    QTextEdit::ExtraSelection mark;
    mark.format.setBackground(QColor(0xff, 0xe0, 0x8a));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    mark.cursor = QTextCursor(block_it);
    marks << mark;
    if (first < 0) first = i;
  }
  logs_->setExtraSelections(marks);
  if (first >= 0) {
    QTextCursor c(logs_->document()->findBlockByNumber(first));
    logs_->setTextCursor(c);
    logs_->centerCursor();
  }
}

QString NodePage::currentPort() const {
  if (job_ == nullptr || node_ < 0 || ports_->currentIndex() < 0) return {};
  const int p = ports_->currentData().toInt();
  const auto& n = job_->report.nodes(node_);
  if (p < 0 || p >= n.ports_size()) return {};
  return QStringLiteral("%1 port %2").arg(q(n.ports(p).device())).arg(n.ports(p).port());
}

QString NodePage::factsText() const { return facts_->text(); }

void NodePage::showPort() {
  if (job_ == nullptr || node_ < 0) return;
  const int p = ports_->currentData().toInt();
  const auto& n = job_->report.nodes(node_);
  if (p < 0 || p >= n.ports_size()) {
    counters_->setPort(nullptr, {}, 0);
    return;
  }
  counters_->setPort(whole_ ? &*whole_ : nullptr, q(n.ports(p).device()),
                     static_cast<int>(n.ports(p).port()));
  counters_view_->resizeColumnsToContents();
  empty_->setText(whole_ ? tr("This port has no counters in the snapshot (the capture held none).")
                         : tr("Counters not shown: %1").arg(whole_error_));
  empty_->setVisible(counters_->rowCount() == 0);
}

void NodePage::loadJob(LoadedJob* job) { setJob(job != nullptr ? job->data.get() : nullptr); }

}  // namespace ibc::console
