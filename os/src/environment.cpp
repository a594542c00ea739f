// Environment variables and the running process's limits and host name.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include "ibc/os/os.h"

namespace ibc::os {

std::string ProcessEnvironment::get(std::string_view name) const {
  const char* v = std::getenv(std::string(name).c_str());
  return v != nullptr ? std::string(v) : std::string();
}

ProcessFacts readProcessFacts() {
  ProcessFacts f;
  rlimit rl{};
  if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    f.memlock_known = true;
    f.memlock_unlimited = rl.rlim_cur == RLIM_INFINITY;
    f.memlock_soft_bytes = rl.rlim_cur == RLIM_INFINITY ? 0 : rl.rlim_cur;
    f.memlock_hard_bytes = rl.rlim_max == RLIM_INFINITY ? 0 : rl.rlim_max;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) f.hostname = host;
  return f;
}

}  // namespace ibc::os
