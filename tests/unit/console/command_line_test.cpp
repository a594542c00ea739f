// command_line.h: the console's options (--page's help from the registry), what they ask for
// once checked, the usage errors, and the display chosen before Qt starts.

#include <gtest/gtest.h>

#include <QCommandLineParser>

#include "command_line.h"
#include "pages/page_registry.h"

namespace ibc::console {
namespace {

ParsedArguments read(QStringList args) {
  args.prepend(QStringLiteral("ibcollect-console"));
  QCommandLineParser parser;
  addConsoleOptions(parser);
  EXPECT_TRUE(parser.parse(args)) << parser.errorText().toStdString();
  return readConsoleArguments(parser);
}

TEST(ConsoleCommandLine, PagesHelpNamesTheRegistrysPages) {
  QCommandLineParser parser;
  addConsoleOptions(parser);
  const QString help = parser.helpText().simplified();  // one line: Qt wraps the help
  EXPECT_TRUE(
      help.contains(QStringLiteral("Page to show first (jobs, grid, node, findings, diff, "
                                   "charts, escalate)")))
      << help.toStdString();
  EXPECT_TRUE(help.contains(pageNames().join(QStringLiteral(", "))));
  EXPECT_TRUE(help.contains(QStringLiteral("--screenshot <DIR>")));
}

TEST(ConsoleCommandLine, FilesPagesAndScreenshotsAreReadAsGiven) {
  const ParsedArguments p =
      read({QStringLiteral("a.ibsnap"), QStringLiteral("b.ibbundle"), QStringLiteral("--page"),
            QStringLiteral("findings"), QStringLiteral("--node"), QStringLiteral("gpu07"),
            QStringLiteral("--screenshot"), QStringLiteral("/tmp/shots"), QStringLiteral("--size"),
            QStringLiteral("800x600"), QStringLiteral("--timings")});
  ASSERT_TRUE(p.error.isEmpty()) << p.error.toStdString();
  EXPECT_EQ(p.exit_code, 0);
  const ConsoleArguments& a = p.arguments;
  EXPECT_EQ(a.files, (QStringList{QStringLiteral("a.ibsnap"), QStringLiteral("b.ibbundle")}));
  EXPECT_EQ(a.page, QStringLiteral("findings"));
  EXPECT_EQ(a.node, QStringLiteral("gpu07"));
  EXPECT_EQ(a.screenshot, QStringLiteral("/tmp/shots"));
  EXPECT_EQ(a.size, QSize(800, 600));
  EXPECT_TRUE(a.timings);
  EXPECT_FALSE(a.job.has_value());
  EXPECT_FALSE(a.collector_given);
  EXPECT_FALSE(a.list_jobs);
  // Without --screenshot: the window, at the default size.
  const ParsedArguments window = read({QStringLiteral("a.ibsnap")});
  EXPECT_FALSE(window.arguments.screenshot.has_value());
  EXPECT_FALSE(window.arguments.node.has_value());
  EXPECT_EQ(window.arguments.size, QSize(1400, 860));
}

TEST(ConsoleCommandLine, TheCollectorFlagsSetTheConnectionAndACollectorWithATenantListsJobs) {
  const ParsedArguments p = read(
      {QStringLiteral("--collector"), QStringLiteral("10.0.0.5:7070"), QStringLiteral("--tenant"),
       QStringLiteral("acme"), QStringLiteral("--ca"), QStringLiteral("ca.pem"),
       QStringLiteral("--cert"), QStringLiteral("me.pem"), QStringLiteral("--key"),
       QStringLiteral("me.key"), QStringLiteral("--job"), QStringLiteral("4242")});
  ASSERT_TRUE(p.error.isEmpty()) << p.error.toStdString();
  const ConsoleArguments& a = p.arguments;
  EXPECT_EQ(a.collector.endpoint, "10.0.0.5:7070");
  EXPECT_EQ(a.collector.ca_file, "ca.pem");
  EXPECT_EQ(a.collector.cert_file, "me.pem");
  EXPECT_EQ(a.collector.key_file, "me.key");
  EXPECT_EQ(a.tenant, QStringLiteral("acme"));
  EXPECT_EQ(a.job, QStringLiteral("4242"));
  EXPECT_TRUE(a.collector_given);
  EXPECT_TRUE(a.list_jobs);
  // A CA alone checks opened files; it lists nothing.
  const ParsedArguments ca_only = read({QStringLiteral("--ca"), QStringLiteral("ca.pem")});
  EXPECT_TRUE(ca_only.arguments.collector_given);
  EXPECT_FALSE(ca_only.arguments.list_jobs);
}

TEST(ConsoleCommandLine, UsageErrorsSayWhatIsWrongAndExitThree) {
  struct Case {
    QStringList args;
    QString error;
  };
  const QString pages = pageNames().join(QStringLiteral(", "));
  for (const Case& c : {
           Case{{QStringLiteral("--page"), QStringLiteral("nodes")},
                QStringLiteral("no page \"nodes\"; pages: ") + pages},
           Case{{QStringLiteral("--job"), QStringLiteral("7"), QStringLiteral("--tenant"),
                 QStringLiteral("acme")},
                QStringLiteral("--job needs --collector and --tenant (and --ca, --cert, --key of "
                               "a support certificate)")},
           Case{{QStringLiteral("a.ibsnap"), QStringLiteral("--job"), QStringLiteral("7"),
                 QStringLiteral("--collector"), QStringLiteral("h:1"), QStringLiteral("--tenant"),
                 QStringLiteral("t")},
                QStringLiteral("give either files or --job, not both")},
           Case{{QStringLiteral("--screenshot"), QStringLiteral("d"), QStringLiteral("--size"),
                 QStringLiteral("300x200")},
                QStringLiteral("--size wants WxH, at least 320x240")},
           Case{{QStringLiteral("--screenshot"), QStringLiteral("d"), QStringLiteral("--size"),
                 QStringLiteral("big")},
                QStringLiteral("--size wants WxH, at least 320x240")},
       }) {
    const ParsedArguments p = read(c.args);
    EXPECT_EQ(p.error, c.error) << c.args.join(' ').toStdString();
    EXPECT_EQ(p.exit_code, 3) << c.args.join(' ').toStdString();
  }
  // --size only matters for --screenshot.
  EXPECT_TRUE(read({QStringLiteral("--size"), QStringLiteral("1x1")}).error.isEmpty());
}

// The environment as it was, put back after a test changes it.
struct SavedEnvironment {
  const char* const names[3] = {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"};
  QByteArray values[3];
  bool set[3];
  SavedEnvironment() {
    for (int i = 0; i < 3; ++i) {
      set[i] = qEnvironmentVariableIsSet(names[i]);
      values[i] = qgetenv(names[i]);
      qunsetenv(names[i]);
    }
  }
  ~SavedEnvironment() {
    for (int i = 0; i < 3; ++i) set[i] ? qputenv(names[i], values[i]) : qunsetenv(names[i]);
  }
};

TEST(ChooseDisplay, ScreenshotsAndHelpGoOffscreenAndTheWindowNeedsADisplay) {
  const SavedEnvironment saved;
  const char* window[] = {"ibcollect-console", "a.ibsnap"};
  const char* shots[] = {"ibcollect-console", "a.ibsnap", "--screenshot", "d"};
  const char* help[] = {"ibcollect-console", "--help"};
  EXPECT_EQ(chooseDisplay(2, window), Display::Missing);
  EXPECT_EQ(chooseDisplay(2, help), Display::Offscreen);
  EXPECT_EQ(qgetenv("QT_QPA_PLATFORM"), QByteArray("offscreen"));
  // Once a platform is chosen (here: by the call before), it stays as it is.
  EXPECT_EQ(chooseDisplay(4, shots), Display::Given);
  EXPECT_EQ(chooseDisplay(2, window), Display::Given);
  qunsetenv("QT_QPA_PLATFORM");
  EXPECT_EQ(chooseDisplay(4, shots), Display::Offscreen);
  qunsetenv("QT_QPA_PLATFORM");
  qputenv("WAYLAND_DISPLAY", "wayland-0");
  EXPECT_EQ(chooseDisplay(2, window), Display::Given);
  EXPECT_FALSE(qEnvironmentVariableIsSet("QT_QPA_PLATFORM"));
}

}  // namespace
}  // namespace ibc::console
