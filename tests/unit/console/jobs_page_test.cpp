// pages/jobs_page.h: the connection it holds, and the opened files listed as the job shown.

#include <gtest/gtest.h>

#include <QLineEdit>
#include <QTreeView>

#include "console_fixtures.h"
#include "pages/jobs_page.h"

namespace ibc::console {
namespace {

TEST(JobsPage, TheConnectionGivenIsTheOneItHoldsAndShows) {
  JobsPage page;
  page.setSettings({"collector.example:7070", "/pki/ca.pem", "/pki/alice.pem", "/pki/alice.key"},
                   QStringLiteral("acme"));
  const CollectorSettings s = page.settings();
  EXPECT_EQ(s.endpoint, "collector.example:7070");
  EXPECT_EQ(s.ca_file, "/pki/ca.pem");
  EXPECT_EQ(s.cert_file, "/pki/alice.pem");
  EXPECT_EQ(s.key_file, "/pki/alice.key");
  EXPECT_EQ(page.tenant(), QStringLiteral("acme"));
  EXPECT_EQ(page.collectorEdit()->text(), QStringLiteral("collector.example:7070"));
}

TEST(JobsPage, OpenedUnsignedFilesAreListedAsOneJobShownWithItsNodesAndGoneWhenClosed) {
  JobsPage page;
  page.resize(1200, 600);
  auto loaded = loadedJob(job());
  page.loadJob(loaded.get());
  page.show();  // listed when seen
  const QAbstractItemModel* m = page.view()->model();
  QModelIndex opened;
  for (int r = 0; r < m->rowCount(); ++r)
    if (m->index(r, 0).data().toString() == QStringLiteral("opened")) opened = m->index(r, 0);
  ASSERT_TRUE(opened.isValid());
  EXPECT_EQ(opened.siblingAtColumn(3).data().toString(), QStringLiteral("4 node(s)"));
  ASSERT_EQ(m->rowCount(opened), 1);
  EXPECT_EQ(m->index(0, 0, opened).data().toString(), QStringLiteral("no job id, unsigned"));
  EXPECT_EQ(m->index(0, 1, opened).data().toString(), QStringLiteral("4"));
  EXPECT_EQ(m->index(0, 3, opened).data().toString(), QStringLiteral("shown: 4 node(s)"));
  page.loadJob(nullptr);
  for (int r = 0; r < m->rowCount(); ++r)
    EXPECT_NE(m->index(r, 0).data().toString(), QStringLiteral("opened"));
}

}  // namespace
}  // namespace ibc::console
