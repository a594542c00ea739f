#pragma once

// The console's command line (DESIGN.md §3, console/README.md): its options, what they ask for
// once checked, and running it (the window for an engineer, or --screenshot).
//   ibcollect-console [FILE.ibsnap|BUNDLE.ibbundle...] [--collector HOST:PORT --ca --cert --key]
//                     [--tenant T] [--job ID] [--page NAME] [--node NAME] [--screenshot DIR]
// main.cpp chooses the display, starts Qt, parses with these options and calls runConsole.

#include <QCommandLineParser>
#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

#include "console_arguments.h"

namespace ibc::console {

// Where Qt draws, chosen before it starts (Qt aborts without a display).
enum class Display {
  Given,      // QT_QPA_PLATFORM is set, or DISPLAY / WAYLAND_DISPLAY: as it is
  Offscreen,  // --screenshot, --help, --version: set QT_QPA_PLATFORM=offscreen (no display needed)
  Missing,    // none, and the arguments need one: say kNoDisplay and exit 3
};
// Reads the arguments and the environment; sets QT_QPA_PLATFORM for Offscreen.
Display chooseDisplay(int argc, const char* const* argv);
inline constexpr const char* kNoDisplay =
    "no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session or with "
    "`ssh -X`, or render the pages to PNG files with --screenshot DIR";

// The console's options on `parser` (--help lists them in this order; --page's help names
// the registry's pages).
void addConsoleOptions(QCommandLineParser& parser);

// The arguments `parser` parsed (addConsoleOptions, then process or parse), checked. Errors
// are a sentence for stderr and exit code 3 (usage): an unknown page (naming the pages), --job
// without --collector and --tenant, files and --job together, --size below 320x240.
struct ParsedArguments {
  ConsoleArguments arguments;
  QString error;  // "" when the arguments hold
  int exit_code = 0;
};
ParsedArguments readConsoleArguments(const QCommandLineParser& parser);

// Runs what `arguments` ask for with QApplication started: the window (until it closes) or
// --screenshot (screenshots.h). Returns the process's exit code.
int runConsole(const ConsoleArguments& arguments);

}  // namespace ibc::console
