#pragma once

// The OS seams of ibc_os (ibc/os/os.h) under the agent's names: the probes, the launcher,
// the spool and the CLI take these interfaces, and main() builds their POSIX adapters.

#include "ibc/os/os.h"

namespace ibc::agent {

using core::Error;
using core::ErrorCode;
using core::Result;

using os::Access;
using os::Clock;
using os::CommandResult;
using os::CommandRunner;
using os::DiskFileWriter;
using os::Environment;
using os::errnoError;
using os::execProgram;
using os::Filesystem;
using os::FileWriter;
using os::makeDirectories;
using os::MemoryFilesystem;
using os::ProcessEnvironment;
using os::ProcessFacts;
using os::ProcessRunner;
using os::readProcessFacts;
using os::RootedFilesystem;
using os::runSupervised;
using os::selfExecutable;
using os::SupervisedExit;
using os::SystemClock;
using os::writeFileAtomic;

}  // namespace ibc::agent
