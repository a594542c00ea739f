// pages/page_registry.h: the pages in tab order, their names known before any is built (--help
// lists them), and each page built from the registry answering to its name.

#include <gtest/gtest.h>

#include <QWidget>
#include <set>

#include "pages/page.h"
#include "pages/page_registry.h"

namespace ibc::console {
namespace {

TEST(PageRegistry, TheSevenPagesAreListedInTabOrderOnceEach) {
  EXPECT_EQ(pageNames(),
            (QStringList{QStringLiteral("jobs"), QStringLiteral("grid"), QStringLiteral("node"),
                         QStringLiteral("findings"), QStringLiteral("diff"),
                         QStringLiteral("charts"), QStringLiteral("escalate")}));
  const QStringList names = pageNames();
  const std::set<QString> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), pageKinds().size());
}

TEST(PageRegistry, EachPageBuiltAnswersToItsRegisteredNameWithATitleAndIsReadyBeforeAJob) {
  QWidget parent;
  const std::vector<Page*> pages = createPages(&parent);
  ASSERT_EQ(pages.size(), pageKinds().size());
  for (std::size_t i = 0; i < pages.size(); ++i) {
    EXPECT_EQ(pages[i]->parent(), &parent);
    EXPECT_EQ(pages[i]->pageName(), QString::fromLatin1(pageKinds()[i].name));
    EXPECT_FALSE(pages[i]->pageTitle().isEmpty()) << pageKinds()[i].name;
    EXPECT_TRUE(pages[i]->isReady()) << pageKinds()[i].name;  // nothing to wait for yet
  }
}

}  // namespace
}  // namespace ibc::console
