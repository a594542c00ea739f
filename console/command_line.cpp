#include "command_line.h"

#include <QApplication>
#include <cstring>

#include "main_window.h"
#include "pages/jobs_page.h"
#include "pages/page_registry.h"
#include "screenshots.h"

namespace ibc::console {

namespace {

// Option names as addConsoleOptions gives them.
const QString kPage = QStringLiteral("page");
const QString kScreenshot = QStringLiteral("screenshot");
const QString kSize = QStringLiteral("size");
const QString kTimings = QStringLiteral("timings");
const QString kNode = QStringLiteral("node");
const QString kCollector = QStringLiteral("collector");
const QString kCa = QStringLiteral("ca");
const QString kCert = QStringLiteral("cert");
const QString kKey = QStringLiteral("key");
const QString kTenant = QStringLiteral("tenant");
const QString kJob = QStringLiteral("job");

// The window for an engineer: the last layout, then what the command line asked for.
int runWindow(MainWindow& window, const ConsoleArguments& a) {
  window.resize(1400, 860);
  // The last window layout and connection (after the command line's, which wins).
  window.restoreSettings();
  window.show();
  if (!a.page.isEmpty()) window.showPage(a.page);
  if (a.node) {
    QObject::connect(
        &window, &MainWindow::finished, &window,
        [&window, name = *a.node] { window.selectNode(name); }, Qt::SingleShotConnection);
  }
  if (!a.files.isEmpty()) window.openFiles(a.files);
  if (a.job) {
    window.openCollectorJob(a.tenant, *a.job);
  } else if (a.list_jobs) {
    window.jobsPage()->refresh();
  }
  return QApplication::exec();
}

}  // namespace

Display chooseDisplay(int argc, const char* const* argv) {
  bool headless = false;
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : {"--screenshot", "--help", "-h", "--help-all", "--version", "-v"})
      headless = headless || std::strcmp(argv[i], flag) == 0;
  }
  if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) return Display::Given;
  if (headless) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    return Display::Offscreen;
  }
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
    return Display::Missing;
  return Display::Given;
}

void addConsoleOptions(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      QStringLiteral("Compare a job's nodes from signed snapshots, drill down, escalate."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      QStringLiteral("files"),
      QStringLiteral("Snapshots (FILE.ibsnap) or bundles (BUNDLE.ibbundle, verified with --ca)"),
      QStringLiteral("[FILE.ibsnap|BUNDLE.ibbundle...]"));
  parser.addOptions({
      {kPage, QStringLiteral("Page to show first (%1)").arg(pageNames().join(QStringLiteral(", "))),
       QStringLiteral("NAME")},
      {kNode, QStringLiteral("Node to select first (its label or name; default: the worst node)"),
       QStringLiteral("NAME")},
      {kScreenshot,
       QStringLiteral("Render the pages (or --page alone) into DIR/<page>.png and exit"),
       QStringLiteral("DIR")},
      {kSize, QStringLiteral("Window size for --screenshot (default 1400x860)"),
       QStringLiteral("WxH"), QStringLiteral("1400x860")},
      {kTimings, QStringLiteral("With --screenshot: print to stderr how long the load and each "
                                "page took and the peak memory so far (benchmarks)")},
      {kCollector, QStringLiteral("Collector to browse (jobs page), HOST:PORT"),
       QStringLiteral("HOST:PORT")},
      {kCa,
       QStringLiteral("CA the collector's and the snapshots' certificates chain to (opened "
                      "files are checked against it)"),
       QStringLiteral("CA.pem")},
      {kCert, QStringLiteral("Your support certificate (PEM)"), QStringLiteral("CERT.pem")},
      {kKey, QStringLiteral("Its private key (PEM)"), QStringLiteral("KEY.pem")},
      {kTenant, QStringLiteral("Tenant whose jobs the jobs page lists"), QStringLiteral("T")},
      {kJob,
       QStringLiteral("Job to fetch from the collector and open (needs --collector, --tenant "
                      "and the certificate flags)"),
       QStringLiteral("ID")},
  });
}

ParsedArguments readConsoleArguments(const QCommandLineParser& cli) {
  ParsedArguments out;
  ConsoleArguments& a = out.arguments;
  const auto usage = [&out](QString error) {
    out.error = std::move(error);
    out.exit_code = 3;
    return out;
  };
  a.page = cli.value(kPage);
  if (!a.page.isEmpty() && !pageNames().contains(a.page)) {
    return usage(QStringLiteral("no page \"%1\"; pages: %2")
                     .arg(a.page, pageNames().join(QStringLiteral(", "))));
  }
  a.files = cli.positionalArguments();
  if (cli.isSet(kJob) && (!cli.isSet(kCollector) || !cli.isSet(kTenant))) {
    return usage(
        QStringLiteral("--job needs --collector and --tenant (and --ca, --cert, --key "
                       "of a support certificate)"));
  }
  if (cli.isSet(kJob) && !a.files.isEmpty())
    return usage(QStringLiteral("give either files or --job, not both"));
  if (cli.isSet(kScreenshot)) {
    a.screenshot = cli.value(kScreenshot);
    const QStringList wh = cli.value(kSize).split(QLatin1Char('x'));
    a.size = QSize(wh.size() == 2 ? wh[0].toInt() : 0, wh.size() == 2 ? wh[1].toInt() : 0);
    if (a.size.width() < 320 || a.size.height() < 240)
      return usage(QStringLiteral("--size wants WxH, at least 320x240"));
  }
  if (cli.isSet(kNode)) a.node = cli.value(kNode);
  if (cli.isSet(kJob)) a.job = cli.value(kJob);
  a.timings = cli.isSet(kTimings);
  a.collector = {cli.value(kCollector).toStdString(), cli.value(kCa).toStdString(),
                 cli.value(kCert).toStdString(), cli.value(kKey).toStdString()};
  a.tenant = cli.value(kTenant);
  a.collector_given =
      cli.isSet(kCollector) || cli.isSet(kTenant) || cli.isSet(kCa) || cli.isSet(kCert);
  a.list_jobs = cli.isSet(kCollector) && cli.isSet(kTenant);
  return out;
}

int runConsole(const ConsoleArguments& arguments) {
  MainWindow window;
  if (arguments.collector_given) window.setCollector(arguments.collector, arguments.tenant);
  if (!arguments.screenshot) return runWindow(window, arguments);
  return renderScreenshots(window, arguments);
}

}  // namespace ibc::console
