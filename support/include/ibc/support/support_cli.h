#pragma once

// The `ibcollect-support` command line (docs/architecture.md, docs/commands.md): the support and
// provider commands `bundle`, `case`, `fetch` and `host-inspect`, kept out of the tenant program so
// that `ibcollect` links no libarchive. `ibcollect COMMAND` runs this program git-style.

#include <string>
#include <vector>

#include "ibc/agent/cli.h"

namespace ibc::agent {

// Runs one command line (args without argv[0], the first being the command). Returns the
// docs/commands.md exit code.
int runSupportCli(const std::vector<std::string>& args, CliEnvironment& env);

}  // namespace ibc::agent
