// widgets/filter_edit.h: the filter box shows a term it cannot read (a red frame, the reason
// as its tooltip) and goes back to its help once the text reads.

#include <gtest/gtest.h>

#include "widgets/filter_edit.h"

namespace ibc::console {
namespace {

TEST(FilterEdit, AnErrorMarksTheBoxAndBecomesItsTooltipUntilCleared) {
  const QString help = QStringLiteral("Filter: node glob, key=value, key<N");
  FilterEdit box(help);
  EXPECT_EQ(box.placeholderText(), help);
  EXPECT_EQ(box.toolTip(), help);
  EXPECT_TRUE(box.isClearButtonEnabled());
  EXPECT_TRUE(box.error().isEmpty());
  EXPECT_TRUE(box.styleSheet().isEmpty());

  const QString why = QStringLiteral("cannot read \"rate<<3\"");
  box.setError(why);
  EXPECT_EQ(box.error(), why);
  EXPECT_EQ(box.toolTip(), why);
  EXPECT_TRUE(box.styleSheet().contains(QStringLiteral("border")))
      << box.styleSheet().toStdString();

  box.setError(QString());
  EXPECT_TRUE(box.error().isEmpty());
  EXPECT_EQ(box.toolTip(), help);
  EXPECT_TRUE(box.styleSheet().isEmpty());
}

}  // namespace
}  // namespace ibc::console
