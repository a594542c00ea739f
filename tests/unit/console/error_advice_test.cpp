// error_advice.h: the few situations an engineer acts on, sorted from the messages core and
// ibc_client give, the worst leading, each with what to do next.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ibc/console/error_advice.h"

namespace ibc::console {
namespace {

TEST(ClassifyError, EachMessageIsTheSituationItDescribes) {
  struct Case {
    const char* message;
    ErrorKind kind;
  };
  for (const Case& c : {
           Case{"gpu01.ibsnap: changed after it was signed (signature mismatch)",
                ErrorKind::Tampered},
           Case{"collector:0123456789ab (node07): arrived damaged (its bytes do not hash to its "
                "id)",
                ErrorKind::Tampered},
           Case{"gpu02.ibsnap: the signature does not hold: certificate has expired",
                ErrorKind::UntrustedSigner},
           Case{"TLS handshake failed: certificate verify failed", ErrorKind::Certificate},
           Case{"read: tlsv13 alert certificate required", ErrorKind::Certificate},
           Case{"--cert /tmp/me.pem: No such file or directory", ErrorKind::Certificate},
           Case{"--ca is not set", ErrorKind::Certificate},
           Case{"the collector refused: PERMISSION_DENIED support certificate required",
                ErrorKind::Refused},
           Case{"cannot reach the collector at 127.0.0.1:7070: Connection refused",
                ErrorKind::CollectorDown},
           Case{"/data/run/garbage.ibsnap: not an ibcollect snapshot file", ErrorKind::Unreadable},
           Case{"", ErrorKind::Unreadable},
       }) {
    EXPECT_EQ(classifyError(c.message), c.kind) << c.message;
  }
}

TEST(AdviseErrors, TheWorstKindLeadsAndEveryMessageIsListed) {
  const std::vector<std::string> errors = {
      "/data/run/missing.ibsnap: No such file or directory",
      "/data/run/gpu03.ibsnap: changed after it was signed",
  };
  const ErrorAdvice a = adviseErrors(errors, QStringLiteral("/data/run"));
  EXPECT_EQ(a.kind, ErrorKind::Tampered);
  EXPECT_EQ(a.title, QStringLiteral("Snapshot refused: changed after it was signed"));
  EXPECT_EQ(a.what, QStringLiteral("/data/run/missing.ibsnap: No such file or directory\n"
                                   "/data/run/gpu03.ibsnap: changed after it was signed"));
  EXPECT_TRUE(a.next.contains(QStringLiteral("original .ibsnap"))) << a.next.toStdString();
}

TEST(AdviseErrors, ACollectorThatIsDownIsNamedInWhatToDoNext) {
  const ErrorAdvice a = adviseErrors({"cannot reach the collector at 10.0.0.5:7070: timed out"},
                                     QStringLiteral("the collector at 10.0.0.5:7070"));
  EXPECT_EQ(a.kind, ErrorKind::CollectorDown);
  EXPECT_EQ(a.title, QStringLiteral("The collector is not answering"));
  EXPECT_TRUE(a.next.contains(QStringLiteral("reachable at the collector at 10.0.0.5:7070")))
      << a.next.toStdString();
}

TEST(AdviseErrors, EverySituationHasATitleAndANextStepAndNoErrorsNone) {
  for (const char* message :
       {"changed after it was signed", "signature does not hold", "--key missing",
        "the collector refused", "collector gone", "truncated"}) {
    const ErrorAdvice a = adviseErrors({message}, QStringLiteral("here"));
    EXPECT_EQ(a.kind, classifyError(message)) << message;
    EXPECT_FALSE(a.title.isEmpty()) << message;
    EXPECT_FALSE(a.next.isEmpty()) << message;
    EXPECT_EQ(a.what, QString::fromLatin1(message));
  }
  const ErrorAdvice none = adviseErrors({}, QStringLiteral("here"));
  EXPECT_TRUE(none.title.isEmpty());
  EXPECT_TRUE(none.what.isEmpty());
}

}  // namespace
}  // namespace ibc::console
