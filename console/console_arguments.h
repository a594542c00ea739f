#pragma once

// What the console's command line asks for, once checked (command_line.h reads it, the
// window and --screenshot act on it): a declaration both sides share.

#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

#include "ibc/console/collector_source.h"

namespace ibc::console {

// What the command line asks for, checked.
struct ConsoleArguments {
  QStringList files;            // snapshots and bundles to open
  QString page;                 // --page: one of pageNames(), or "" (every page for --screenshot)
  std::optional<QString> node;  // --node: a node's label or name
  std::optional<QString> screenshot;  // --screenshot DIR; unset for the window
  QSize size{1400, 860};              // --size WxH, for --screenshot
  bool timings = false;               // --timings
  // --collector/--ca/--cert/--key and --tenant; `collector_given` when any of those was given.
  CollectorSettings collector;
  QString tenant;
  bool collector_given = false;
  // The jobs page lists the tenant's jobs first: --collector and --tenant were given.
  bool list_jobs = false;
  std::optional<QString> job;  // --job ID (with --collector and --tenant)
};

}  // namespace ibc::console
