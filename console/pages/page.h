#pragma once

// One page of the console (console/README.md): a tab the window keeps in a list. A page receives
// the job and the selection, tells the window when the engineer picks a node, and says when what
// it shows is complete (isReady, ready); the window and the screenshots know no page by type for
// this (adding a page is one class and one line in page_registry.cpp).

#include <QString>
#include <QWidget>

#include "ibc/console/error_advice.h"

namespace ibc::console {

struct LoadedJob;

class Page : public QWidget {
  Q_OBJECT

 public:
  using QWidget::QWidget;

  // The name --page and --screenshot use ("grid": the class's kName, which the registry lists),
  // and the tab's title ("Grid").
  virtual QString pageName() const = 0;
  virtual QString pageTitle() const = 0;
  // A page whose work is heavy on a large job (the diff against the majority, the charts,
  // the escalation plan) gets the job and the selection when it is shown, not on every load.
  virtual bool lazy() const { return false; }
  // The window's job; nullptr before the old one is freed. A page may take its part of it
  // (the grid takes its prepared rows); the data stays the window's until the next call.
  virtual void loadJob(LoadedJob* job) = 0;
  // The node (index into report.nodes()) and port picked on any page; device "" and port 0
  // for the node as a whole (a page then shows its worst port).
  virtual void selectNode(int node_index, const QString& device, int port) = 0;
  // Whether the page shows all it has for the job and selection it was given: false while a
  // worker works out part of it (the diff's majority, the escalation plan, a listing of the
  // collector's jobs). A page that never waits is always ready.
  bool isReady() const { return ready_; }

 signals:
  // What the page shows is complete: emitted each time isReady() turns true after a wait (so
  // a caller that finds the page not ready waits for this; one that finds it ready need not).
  // On the GUI thread.
  void ready();
  // The engineer picked a node (a row, a finding, a bar): every page shows it.
  void nodeSelected(int node_index, const QString& device, int port);
  // Enter or double-click on a node: the window shows it on the node page.
  void openNodeRequested(int node_index, const QString& device, int port);
  // A line for the status bar, and a failure to put before the engineer.
  void statusMessage(const QString& message);
  void failed(const ErrorAdvice& advice);

 protected:
  // A page that hands work to a worker calls setReady(false) when it does and setReady(true)
  // when the answer it waits for is shown; turning true emits ready().
  void setReady(bool now_ready) {
    const bool was = ready_;
    ready_ = now_ready;
    if (now_ready && !was) emit ready();
  }

 private:
  bool ready_ = true;
};

}  // namespace ibc::console
