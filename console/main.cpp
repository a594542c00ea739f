// ibcollect-console: the support console (console/README.md). Chooses the display, starts Qt,
// parses the command line and runs it (command_line.h; --screenshot: screenshots.h).

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "command_line.h"

int main(int argc, char** argv) {
  // Screenshots, --help and --version never need a display: the offscreen platform is chosen
  // before Qt starts (else Qt aborts without one); anything else without one is said in a line.
  if (ibc::console::chooseDisplay(argc, argv) == ibc::console::Display::Missing) {
    std::fprintf(stderr, "ibcollect-console: %s\n", ibc::console::kNoDisplay);
    return 3;
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("ibcollect-console"));
  QApplication::setOrganizationName(QStringLiteral("ibcollect"));
  QApplication::setApplicationVersion(QStringLiteral(IBC_VERSION));

  QCommandLineParser cli;
  ibc::console::addConsoleOptions(cli);
  cli.process(app);
  const ibc::console::ParsedArguments parsed = ibc::console::readConsoleArguments(cli);
  if (!parsed.error.isEmpty()) {
    std::fprintf(stderr, "ibcollect-console: %s\n", qPrintable(parsed.error));
    return parsed.exit_code;
  }
  return ibc::console::runConsole(parsed.arguments);
}
