// ibcollect: the tenant program (DESIGN §2, §3).
#include "ibc/agent/cli.h"

int main(int argc, char** argv) { return ibc::agent::runProgram(argc, argv, &ibc::agent::runCli); }
