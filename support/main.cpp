// ibcollect-support: the support and provider commands (docs/architecture.md), also run as
// `ibcollect bundle|case|fetch|host-inspect`.
#include "ibc/support/support_cli.h"

int main(int argc, char** argv) {
  return ibc::agent::runProgram(argc, argv, &ibc::agent::runSupportCli);
}
