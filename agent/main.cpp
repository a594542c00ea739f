// ibcollect: the tenant program (docs/architecture.md, docs/commands.md).
#include "ibc/agent/cli.h"

int main(int argc, char** argv) { return ibc::agent::runProgram(argc, argv, &ibc::agent::runCli); }
