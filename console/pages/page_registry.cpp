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

std::vector<Page*> createPages(QWidget* parent) {
  return {
      new JobsPage(parent),     new GridPage(new NodeGridModel(parent), parent),
      new NodePage(parent),     new FindingsPage(new FindingsModel(parent), parent),
      new DiffPage(parent),     new ChartsPage(parent),
      new EscalatePage(parent),
  };
}

}  // namespace ibc::console
