#pragma once

// The console's pages in tab order: adding a page is one class and one line in
// page_registry.cpp. The names (--page, --screenshot, View > pages) come from here, known
// before any page is built (--help lists them).

#include <QStringList>
#include <vector>

class QWidget;

namespace ibc::console {

class Page;

struct PageKind {
  const char* name;                  // the page class's kName, what its pageName() returns
  Page* (*create)(QWidget* parent);  // a new page owned by `parent`
};

// Every page, in tab order.
const std::vector<PageKind>& pageKinds();
// Their names in tab order ("jobs", "grid", ...).
QStringList pageNames();
// One of each, owned by `parent`, in tab order.
std::vector<Page*> createPages(QWidget* parent);

}  // namespace ibc::console
