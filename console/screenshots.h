#pragma once

// --screenshot (DESIGN.md §7): every page (or --page alone) rendered into DIR/<page>.png once
// what it shows is known, then exit; docs and tests use it, no display needed. A page says
// when it has what it shows (Page::isReady, Page::ready); this code knows no page by type.

#include <chrono>

#include "console_arguments.h"

namespace ibc::console {

class MainWindow;
class Page;

// How long one page may take to become ready before --screenshot gives up on it (a
// 10,000-node job's escalation plan takes seconds).
inline constexpr std::chrono::milliseconds kPageReadyTimeout = std::chrono::seconds(120);

// Runs the event loop until `page` is ready (at once when it is), at most `timeout`; false
// when it was not ready by then.
bool waitUntilReady(Page& page, std::chrono::milliseconds timeout);

// Loads what `arguments` name into `window` (files, or --job from the collector, after the
// jobs page listed the tenant's jobs when a collector and tenant are given), then shoots each
// page into arguments.screenshot/<page>.png, printing each file's path on stdout. Returns the
// exit code: 0; 3 for a --node no snapshot has; 4 when the directory cannot be made, nothing
// could be read, the jobs of --job's tenant could not be listed, a page was not ready within
// `ready_timeout` (naming it) or a file cannot be written. Messages go to stderr.
int renderScreenshots(MainWindow& window, const ConsoleArguments& arguments,
                      std::chrono::milliseconds ready_timeout = kPageReadyTimeout);

}  // namespace ibc::console
