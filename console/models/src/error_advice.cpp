#include "ibc/console/error_advice.h"

#include <QObject>
#include <QStringList>
#include <algorithm>

namespace ibc::console {

namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// Lower is more urgent: it leads the dialog.
int urgency(ErrorKind k) {
  switch (k) {
    case ErrorKind::Tampered: return 0;
    case ErrorKind::UntrustedSigner: return 1;
    case ErrorKind::Certificate: return 2;
    case ErrorKind::Refused: return 3;
    case ErrorKind::CollectorDown: return 4;
    case ErrorKind::Unreadable: return 5;
  }
  return 5;
}

}  // namespace

ErrorKind classifyError(const std::string& m) {
  if (has(m, "changed after it was signed") || has(m, "arrived damaged"))
    return ErrorKind::Tampered;
  if (has(m, "signature does not hold")) return ErrorKind::UntrustedSigner;
  // In TLS 1.3 a refused client certificate shows up as an alert on the first read.
  if (has(m, "TLS handshake failed") || has(m, "alert") || has(m, "client certificate") ||
      has(m, "client key") || has(m, "CA certificate") || has(m, "--cert") || has(m, "--key") ||
      has(m, "--ca"))
    return ErrorKind::Certificate;
  if (has(m, "the collector refused")) return ErrorKind::Refused;
  if (has(m, "collector")) return ErrorKind::CollectorDown;
  return ErrorKind::Unreadable;
}

ErrorAdvice adviseErrors(const std::vector<std::string>& errors, const QString& where) {
  ErrorAdvice a;
  if (errors.empty()) return a;
  a.kind = classifyError(errors.front());
  for (const auto& e : errors) {
    const ErrorKind k = classifyError(e);
    if (urgency(k) < urgency(a.kind)) a.kind = k;
  }
  QStringList lines;
  for (const auto& e : errors) lines << QString::fromStdString(e);
  a.what = lines.join(QLatin1Char('\n'));
  switch (a.kind) {
    case ErrorKind::Tampered:
      a.title = QObject::tr("Snapshot refused: changed after it was signed");
      a.next = QObject::tr(
          "Do not use its contents. Ask for the original .ibsnap file (or fetch the job "
          "again from the collector); the snapshots whose signatures hold are shown.");
      break;
    case ErrorKind::UntrustedSigner:
      a.title = QObject::tr("Snapshot refused: its signer is not trusted");
      a.next = QObject::tr(
          "Check that --ca (the jobs page's CA) is the CA that issued the agents' "
          "certificates, and that the certificate had not expired when it signed.");
      break;
    case ErrorKind::Certificate:
      a.title = QObject::tr("The collector did not accept your certificate");
      a.next = QObject::tr(
          "Check that --cert and --key are your support certificate and its key, issued "
          "by the CA the collector trusts, and that --ca is that CA. Then File > Connect.");
      break;
    case ErrorKind::Refused:
      a.title = QObject::tr("The collector refused the request");
      a.next = QObject::tr(
          "Use a support certificate (OU=support) for browsing tenants; agent "
          "certificates may only upload. Check the tenant name.");
      break;
    case ErrorKind::CollectorDown:
      a.title = QObject::tr("The collector is not answering");
      a.next = QObject::tr(
                   "Check that the collector runs and is reachable at %1 (systemctl status "
                   "ibcollect-collector on its host), then File > Reload.")
                   .arg(where);
      break;
    case ErrorKind::Unreadable:
      a.title = QObject::tr("Some files could not be read");
      a.next = QObject::tr(
          "Check that each file is an .ibsnap written by `ibcollect snapshot` and was "
          "copied whole; the others are shown.");
      break;
  }
  return a;
}

}  // namespace ibc::console
