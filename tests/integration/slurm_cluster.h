#pragma once

// What the tests on a real Slurm cluster (tests/integration/slurm/cluster.sh) need of this
// machine. Header-only: the tests that start a cluster include it.

#include <unistd.h>

#include <string>

#include "ibc/os/os.h"

namespace ibc::test {

// Why a cluster cannot run here ("needs root ...", "slurmd is not installed ..."), or "".
inline std::string slurmClusterUnavailable() {
  if (::geteuid() != 0) return "needs root (namespaces, mounts, slurmd)";
  ibc::os::ProcessRunner probe;
  for (const char* tool : {"slurmctld", "slurmd", "munged", "srun", "unshare", "nsenter"}) {
    if (!probe.available(tool))
      return std::string(tool) + " is not installed (scripts/setup.sh installs it)";
  }
  return {};
}

}  // namespace ibc::test
