#include "pages/page_registry.h"

#include "ibc/console/findings_model.h"
#include "ibc/console/node_grid_model.h"
#include "pages/charts_page.h"
#include "pages/diff_page.h"
#include "pages/escalate_page.h"
#include "pages/findings_page.h"
#include "pages/grid_page.h"
#include "pages/jobs_page.h"
#include "pages/node_page.h"

namespace ibc::console {

namespace {

template <class P>
Page* create(QWidget* parent) {
  return new P(parent);
}

}  // namespace

const std::vector<PageKind>& pageKinds() {
  static const std::vector<PageKind> kinds = {
      {JobsPage::kName, &create<JobsPage>},
      {GridPage::kName, [](QWidget* p) -> Page* { return new GridPage(new NodeGridModel(p), p); }},
      {NodePage::kName, &create<NodePage>},
      {FindingsPage::kName,
       [](QWidget* p) -> Page* { return new FindingsPage(new FindingsModel(p), p); }},
      {DiffPage::kName, &create<DiffPage>},
      {ChartsPage::kName, &create<ChartsPage>},
      {EscalatePage::kName, &create<EscalatePage>},
  };
  return kinds;
}

QStringList pageNames() {
  QStringList names;
  for (const PageKind& kind : pageKinds()) names << QString::fromLatin1(kind.name);
  return names;
}

std::vector<Page*> createPages(QWidget* parent) {
  std::vector<Page*> pages;
  for (const PageKind& kind : pageKinds()) pages.push_back(kind.create(parent));
  return pages;
}

}  // namespace ibc::console
