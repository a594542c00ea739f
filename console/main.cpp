// ibcollect-console: the support console (console/README.md).
//   ibcollect-console [FILE.ibsnap|BUNDLE.ibbundle...] [--collector HOST:PORT --ca --cert --key]
//                     [--tenant T] [--job ID] [--page NAME] [--node NAME] [--screenshot DIR]
// --screenshot renders the pages (or --page alone) into DIR/<page>.png with the offscreen
// platform and exits: docs and tests use it, no display needed.

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QScreen>
#include <QTimer>
#include <cstdio>
#include <cstring>

#include "main_window.h"
#include "pages/diff_page.h"
#include "pages/escalate_page.h"
#include "pages/jobs_page.h"

namespace {

// The process's peak resident set so far (VmHWM), for --timings; -1 when unknown.
long peakRssMib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

// The command line's options (--help lists them in this order).
struct Options {
  QCommandLineOption page{
      QStringLiteral("page"),
      QStringLiteral("Page to show first (jobs, grid, node, findings, diff, charts, escalate)"),
      QStringLiteral("NAME")};
  QCommandLineOption screenshot{
      QStringLiteral("screenshot"),
      QStringLiteral("Render the pages (or --page alone) into DIR/<page>.png and exit"),
      QStringLiteral("DIR")};
  QCommandLineOption size{QStringLiteral("size"),
                          QStringLiteral("Window size for --screenshot (default 1400x860)"),
                          QStringLiteral("WxH"), QStringLiteral("1400x860")};
  QCommandLineOption timings{
      QStringLiteral("timings"),
      QStringLiteral("With --screenshot: print to stderr how long the load and each page took "
                     "and the peak memory so far (benchmarks)")};
  QCommandLineOption node{QStringLiteral("node"),
                          QStringLiteral("Node to select first (its label or name; default: the "
                                         "worst node)"),
                          QStringLiteral("NAME")};
  QCommandLineOption collector{QStringLiteral("collector"),
                               QStringLiteral("Collector to browse (jobs page), HOST:PORT"),
                               QStringLiteral("HOST:PORT")};
  QCommandLineOption ca{QStringLiteral("ca"),
                        QStringLiteral("CA the collector's and the snapshots' certificates "
                                       "chain to (opened files are checked against it)"),
                        QStringLiteral("CA.pem")};
  QCommandLineOption cert{QStringLiteral("cert"), QStringLiteral("Your support certificate (PEM)"),
                          QStringLiteral("CERT.pem")};
  QCommandLineOption key{QStringLiteral("key"), QStringLiteral("Its private key (PEM)"),
                         QStringLiteral("KEY.pem")};
  QCommandLineOption tenant{QStringLiteral("tenant"),
                            QStringLiteral("Tenant whose jobs the jobs page lists"),
                            QStringLiteral("T")};
  QCommandLineOption job{QStringLiteral("job"),
                         QStringLiteral("Job to fetch from the collector and open (needs "
                                        "--collector, --tenant and the certificate flags)"),
                         QStringLiteral("ID")};
};

// The window for an engineer: the last layout, then what the command line asked for.
int runWindow(ibc::console::MainWindow& window, const QCommandLineParser& cli, const Options& opt,
              const QString& page_name, const QStringList& files) {
  window.resize(1400, 860);
  // The last window layout and connection (after the command line's, which wins).
  window.restoreSettings();
  window.show();
  if (!page_name.isEmpty()) window.showPage(page_name);
  if (cli.isSet(opt.node)) {
    QObject::connect(
        &window, &ibc::console::MainWindow::finished, &window,
        [&window, name = cli.value(opt.node)] { window.selectNode(name); },
        Qt::SingleShotConnection);
  }
  if (!files.isEmpty()) window.openFiles(files);
  if (cli.isSet(opt.job)) {
    window.openCollectorJob(cli.value(opt.tenant), cli.value(opt.job));
  } else if (cli.isSet(opt.collector) && cli.isSet(opt.tenant)) {
    window.jobsPage()->refresh();
  }
  return QApplication::exec();
}

// --screenshot: every page (or --page) rendered into DIR/<page>.png once what it shows is
// known, then exit.
int renderScreenshots(ibc::console::MainWindow& window, const QCommandLineParser& cli,
                      const Options& opt, const QString& page_name, const QStringList& files) {
  const QStringList wh = cli.value(opt.size).split(QLatin1Char('x'));
  const int w = wh.size() == 2 ? wh[0].toInt() : 0;
  const int h = wh.size() == 2 ? wh[1].toInt() : 0;
  if (w < 320 || h < 240) {
    std::fprintf(stderr, "ibcollect-console: --size wants WxH, at least 320x240\n");
    return 3;
  }
  const QDir dir(cli.value(opt.screenshot));
  if (!dir.exists() && !QDir().mkpath(dir.path())) {
    std::fprintf(stderr, "ibcollect-console: cannot create %s\n", qPrintable(dir.path()));
    return 4;
  }
  window.resize(w, h);
  window.show();
  if (cli.isSet(opt.collector) && cli.isSet(opt.tenant)) {
    // The jobs page lists the tenant's jobs first (its screenshot shows them).
    QEventLoop wait;
    bool listed = false;
    QObject::connect(window.jobsPage(), &ibc::console::JobsPage::listed, &wait, [&](bool ok) {
      listed = ok;
      wait.quit();
    });
    window.jobsPage()->refresh();
    wait.exec();
    if (!listed) {
      std::fprintf(stderr,
                   "ibcollect-console: could not list the jobs of %s (see the jobs "
                   "page)\n",
                   qPrintable(cli.value(opt.tenant)));
      if (cli.isSet(opt.job)) return 4;
    }
  }
  QElapsedTimer clock;
  clock.start();
  if (!files.isEmpty() || cli.isSet(opt.job)) {
    QEventLoop wait;
    QObject::connect(&window, &ibc::console::MainWindow::finished, &wait, &QEventLoop::quit);
    if (cli.isSet(opt.job)) {
      window.openCollectorJob(cli.value(opt.tenant), cli.value(opt.job), /*show_progress=*/false);
    } else {
      window.openFiles(files, /*show_progress=*/false);
    }
    wait.exec();
    for (const auto& e : window.job()->errors)
      std::fprintf(stderr, "ibcollect-console: %s\n", e.c_str());
    if (window.job()->report.nodes_size() == 0) {
      std::fprintf(stderr, "ibcollect-console: no snapshot could be read\n");
      return 4;
    }
    if (cli.isSet(opt.node) && !window.selectNode(cli.value(opt.node))) {
      std::fprintf(stderr, "ibcollect-console: no node \"%s\" in these snapshots\n",
                   qPrintable(cli.value(opt.node)));
      return 3;
    }
  }
  if (cli.isSet(opt.timings))
    std::fprintf(stderr, "timing: load %lld ms (peak RSS so far %ld MiB)\n",
                 static_cast<long long>(clock.restart()), peakRssMib());
  const QStringList pages = page_name.isEmpty() ? window.pageNames() : QStringList{page_name};
  for (const QString& p : pages) {
    window.showPage(p);
    QApplication::processEvents();
    // The escalate page works out what its bundle carries on a worker: shot once it is known.
    if (auto* escalate = window.escalatePage();
        p == QStringLiteral("escalate") && !escalate->planCurrent()) {
      QEventLoop wait;
      QObject::connect(escalate, &ibc::console::EscalatePage::planned, &wait, [&] {
        if (escalate->planCurrent()) wait.quit();
      });
      wait.exec();
      QApplication::processEvents();
    }
    // The diff against the majority is worked out on a worker too.
    if (auto* diff = window.diffPage(); p == QStringLiteral("diff") && diff->majorityPending()) {
      QEventLoop wait;
      QObject::connect(diff, &ibc::console::DiffPage::majorityReady, &wait, &QEventLoop::quit);
      wait.exec();
      QApplication::processEvents();
    }
    const QPixmap shot = window.grab();
    if (cli.isSet(opt.timings))
      std::fprintf(stderr, "timing: %s %lld ms (peak RSS so far %ld MiB)\n", qPrintable(p),
                   static_cast<long long>(clock.restart()), peakRssMib());
    const QString out = dir.filePath(p + QStringLiteral(".png"));
    if (!shot.save(out)) {
      std::fprintf(stderr, "ibcollect-console: cannot write %s\n", qPrintable(out));
      return 4;
    }
    std::printf("%s\n", qPrintable(out));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Screenshots, --help and --version never need a display: choose the offscreen platform
  // before Qt starts (else Qt aborts without one). Anything else without a display is said
  // in one line with what to do, not a Qt platform-plugin abort.
  bool headless = false;
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : {"--screenshot", "--help", "-h", "--help-all", "--version", "-v"})
      headless = headless || std::strcmp(argv[i], flag) == 0;
  }
  const bool platform_chosen = !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
  if (headless && !platform_chosen) qputenv("QT_QPA_PLATFORM", "offscreen");
  if (!headless && !platform_chosen && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    std::fprintf(stderr,
                 "ibcollect-console: no display (DISPLAY and WAYLAND_DISPLAY are unset): run it "
                 "in a desktop session or with `ssh -X`, or render the pages to PNG files with "
                 "--screenshot DIR\n");
    return 3;
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("ibcollect-console"));
  QApplication::setOrganizationName(QStringLiteral("ibcollect"));
  QApplication::setApplicationVersion(QStringLiteral(IBC_VERSION));

  QCommandLineParser cli;
  cli.setApplicationDescription(
      QStringLiteral("Compare a job's nodes from signed snapshots, drill down, escalate."));
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument(
      QStringLiteral("files"),
      QStringLiteral("Snapshots (FILE.ibsnap) or bundles (BUNDLE.ibbundle, verified with --ca)"),
      QStringLiteral("[FILE.ibsnap|BUNDLE.ibbundle...]"));
  const Options opt;
  cli.addOptions({opt.page, opt.node, opt.screenshot, opt.size, opt.timings, opt.collector, opt.ca,
                  opt.cert, opt.key, opt.tenant, opt.job});
  cli.process(app);

  ibc::console::MainWindow window;
  const QString page_name = cli.value(opt.page);
  if (!page_name.isEmpty() && !window.pageNames().contains(page_name)) {
    std::fprintf(stderr, "ibcollect-console: no page \"%s\"; pages: %s\n", qPrintable(page_name),
                 qPrintable(window.pageNames().join(QStringLiteral(", "))));
    return 3;
  }
  const QStringList files = cli.positionalArguments();
  if (cli.isSet(opt.job) && (!cli.isSet(opt.collector) || !cli.isSet(opt.tenant))) {
    std::fprintf(stderr,
                 "ibcollect-console: --job needs --collector and --tenant (and --ca, "
                 "--cert, --key of a support certificate)\n");
    return 3;
  }
  if (cli.isSet(opt.job) && !files.isEmpty()) {
    std::fprintf(stderr, "ibcollect-console: give either files or --job, not both\n");
    return 3;
  }
  if (cli.isSet(opt.collector) || cli.isSet(opt.tenant) || cli.isSet(opt.ca) ||
      cli.isSet(opt.cert)) {
    window.setCollector({cli.value(opt.collector).toStdString(), cli.value(opt.ca).toStdString(),
                         cli.value(opt.cert).toStdString(), cli.value(opt.key).toStdString()},
                        cli.value(opt.tenant));
  }

  if (!cli.isSet(opt.screenshot)) return runWindow(window, cli, opt, page_name, files);
  return renderScreenshots(window, cli, opt, page_name, files);
}
