// The console tests' program: Qt's offscreen platform (no display) and a QApplication, which
// the widgets' and pages' tests need and the models' accept. The window's settings go to a
// temp dir of this run, never the user's. It waits for the
// console's workers before it exits.

#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>

#include "ibc/console/workers.h"
#include "sysfs_json.h"

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("ibcollect-test"));
  QCoreApplication::setApplicationName(QStringLiteral("ibcollect-console"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(
      QSettings::IniFormat, QSettings::UserScope,
      QString::fromStdString(ibc::test::makeTempDir("console-settings") + "/settings"));
  const int failed = RUN_ALL_TESTS();
  // A test's workers finish before the program ends (LeakSanitizer checks what they held).
  ibc::console::waitForWorkers();
  return failed;
}
