#pragma once

// The console's pages in tab order: adding a page is one class and one line in
// page_registry.cpp.

#include <vector>

class QWidget;

namespace ibc::console {

class Page;

std::vector<Page*> createPages(QWidget* parent);

}  // namespace ibc::console
