#include "screenshots.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPixmap>
#include <QTimer>
#include <charconv>
#include <cstdio>
#include <string_view>

#include "ibc/core/text.h"
#include "ibc/os/os.h"
#include "main_window.h"
#include "pages/jobs_page.h"
#include "pages/page.h"

namespace ibc::console {

namespace {

// The process's peak resident set so far (VmHWM), for --timings; -1 when unknown.
long peakRssMib() {
  auto status = os::RootedFilesystem("").readFile("/proc/self/status", 64u << 10);
  if (!status.ok()) return -1;
  for (std::string_view line : core::splitLines(*status)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    const auto words = core::splitWhitespace(line.substr(6));
    long kib = -1;
    if (!words.empty() &&
        std::from_chars(words[0].data(), words[0].data() + words[0].size(), kib).ec ==
            std::errc()) {
      return kib / 1024;
    }
  }
  return -1;
}

// The jobs page lists the tenant's jobs first (its screenshot shows them). 0, or 4 when
// they could not be listed and --job needs them.
int listJobsFirst(MainWindow& window, const ConsoleArguments& a) {
  QEventLoop wait;
  bool listed = false;
  QObject::connect(window.jobsPage(), &JobsPage::listed, &wait, [&](bool ok) {
    listed = ok;
    wait.quit();
  });
  window.jobsPage()->refresh();
  wait.exec();
  if (listed) return 0;
  std::fprintf(stderr, "ibcollect-console: could not list the jobs of %s (see the jobs page)\n",
               qPrintable(a.tenant));
  return a.job ? 4 : 0;
}

// The files or --job loaded and --node selected: 0, 3 (no such node) or 4 (nothing read).
int loadFirst(MainWindow& window, const ConsoleArguments& a) {
  QEventLoop wait;
  QObject::connect(&window, &MainWindow::finished, &wait, &QEventLoop::quit);
  if (a.job) {
    window.openCollectorJob(a.tenant, *a.job, /*show_progress=*/false);
  } else {
    window.openFiles(a.files, /*show_progress=*/false);
  }
  wait.exec();
  for (const auto& e : window.job()->errors)
    std::fprintf(stderr, "ibcollect-console: %s\n", e.c_str());
  if (window.job()->report.nodes_size() == 0) {
    std::fprintf(stderr, "ibcollect-console: no snapshot could be read\n");
    return 4;
  }
  if (a.node && !window.selectNode(*a.node)) {
    std::fprintf(stderr, "ibcollect-console: no node \"%s\" in these snapshots\n",
                 qPrintable(*a.node));
    return 3;
  }
  return 0;
}

// Each page shown, shot once ready and saved: 0, or 4 (a page never ready, a file not written).
int shootPages(MainWindow& window, const ConsoleArguments& a, const QDir& dir,
               std::chrono::milliseconds ready_timeout, QElapsedTimer& clock) {
  const QStringList pages = a.page.isEmpty() ? window.pageNames() : QStringList{a.page};
  for (const QString& name : pages) {
    window.showPage(name);
    QApplication::processEvents();
    Page* page = window.pageNamed(name);
    if (!page->isReady()) {
      if (!waitUntilReady(*page, ready_timeout)) {
        std::fprintf(stderr, "ibcollect-console: the %s page was not ready after %lld s\n",
                     qPrintable(name),
                     static_cast<long long>(
                         std::chrono::duration_cast<std::chrono::seconds>(ready_timeout).count()));
        return 4;
      }
      QApplication::processEvents();
    }
    const QPixmap shot = window.grab();
    if (a.timings)
      std::fprintf(stderr, "timing: %s %lld ms (peak RSS so far %ld MiB)\n", qPrintable(name),
                   static_cast<long long>(clock.restart()), peakRssMib());
    const QString out = dir.filePath(name + QStringLiteral(".png"));
    if (!shot.save(out)) {
      std::fprintf(stderr, "ibcollect-console: cannot write %s\n", qPrintable(out));
      return 4;
    }
    std::printf("%s\n", qPrintable(out));
  }
  return 0;
}

}  // namespace

bool waitUntilReady(Page& page, std::chrono::milliseconds timeout) {
  if (page.isReady()) return true;
  QEventLoop wait;
  QObject::connect(&page, &Page::ready, &wait, &QEventLoop::quit);
  QTimer::singleShot(timeout, &wait, &QEventLoop::quit);
  wait.exec();
  return page.isReady();
}

int renderScreenshots(MainWindow& window, const ConsoleArguments& a,
                      std::chrono::milliseconds ready_timeout) {
  const QDir dir(a.screenshot.value_or(QString()));
  if (!dir.exists() && !QDir().mkpath(dir.path())) {
    std::fprintf(stderr, "ibcollect-console: cannot create %s\n", qPrintable(dir.path()));
    return 4;
  }
  window.resize(a.size);
  window.show();
  if (a.list_jobs) {
    if (const int rc = listJobsFirst(window, a); rc != 0) return rc;
  }
  QElapsedTimer clock;
  clock.start();
  if (!a.files.isEmpty() || a.job) {
    if (const int rc = loadFirst(window, a); rc != 0) return rc;
  }
  if (a.timings)
    std::fprintf(stderr, "timing: load %lld ms (peak RSS so far %ld MiB)\n",
                 static_cast<long long>(clock.restart()), peakRssMib());
  return shootPages(window, a, dir, ready_timeout, clock);
}

}  // namespace ibc::console
