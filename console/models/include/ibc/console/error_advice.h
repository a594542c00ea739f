#pragma once

// Every error the console shows says what happened and what to do next (console/README.md: a wrong
// certificate, a collector that is down, a tampered snapshot). The messages come from core
// and ibc_client (they name the file, the flag or the collector); this sorts them into the
// few situations an engineer acts on, so the dialog and the tests agree on the advice.

#include <QString>
#include <string>
#include <vector>

namespace ibc::console {

enum class ErrorKind {
  Tampered,         // a snapshot whose bytes changed after signing, or that arrived damaged
  UntrustedSigner,  // a signature that does not chain to the CA, expired, not Ed25519
  Certificate,      // our TLS credentials: unreadable, or refused in the handshake
  Refused,          // the collector answered with a rejection (e.g. not a support certificate)
  CollectorDown,    // no connection, or the connection dropped
  Unreadable,       // a file that is not a snapshot (missing, truncated, too large)
};

ErrorKind classifyError(const std::string& message);

struct ErrorAdvice {
  QString title;  // one line: what failed
  QString what;   // what happened, with the reasons (each file or node named)
  QString next;   // what to do next
  ErrorKind kind = ErrorKind::Unreadable;
};

// Advice for `errors` (the messages of one load or request); the worst kind leads (a
// tampered snapshot before an unreadable one). `where` names the source ("the collector at
// 127.0.0.1:7070", "/data/run").
ErrorAdvice adviseErrors(const std::vector<std::string>& errors, const QString& where);

}  // namespace ibc::console
