// Benchmark fixture maker (on demand, not in CI) for bench/job_scale.sh: the nodes of an
// N-node job as a fake launcher would hear them, so that `ibcollect --job` can run its
// launcher side (resolve, reassemble, judge, write, upload) on N nodes that cost nothing.
//
//   ibc_bench_job_scale PKI_DIR FIXTURES_DIR N OUT_DIR
//
// PKI_DIR is a certs/make-pki directory (ca.pem, ca.key). Each node's snapshot is a
// SYNTHETIC node built from the real captures (bench/synthetic_job.h) and signed by that
// node's own certificate (tenant "bench", issued here in memory under the PKI's CA), as
// `job-step --config` signs it on a real node. Writes OUT_DIR/step-output.txt (every node's
// step lines, what srun would print) and OUT_DIR/bin/{srun,scontrol,sinfo}: the fake Slurm
// that answers for job 4242 on nodes sim0000..sim(N-1).

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ibc/core/signing.h"
#include "ibc/core/step_output.h"
#include "synthetic_job.h"
#include "test_pki.h"

namespace {

using namespace ibc;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool writeScript(const std::string& path, const std::string& body) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "#!/bin/sh\n# SYNTHETIC: fake Slurm for bench/job_scale.sh (made by ibc_bench_job_scale)\n"
      << body;
  out.close();
  return out.good() && ::chmod(path.c_str(), 0755) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s PKI_DIR FIXTURES_DIR N OUT_DIR\n", argv[0]);
    return 3;
  }
  const std::string pki = argv[1], out_dir = argv[4];
  const int n = std::atoi(argv[3]);
  if (n < 1) {
    std::fprintf(stderr, "N must be at least 1\n");
    return 3;
  }
  const auto ca = test::TestCa::fromPem(slurp(pki + "/ca.pem"), slurp(pki + "/ca.key"));
  const auto templates = bench::captureTemplates(argv[2]);
  std::ofstream steps(out_dir + "/step-output.txt", std::ios::binary | std::ios::trunc);
  for (int i = 0; i < n; ++i) {
    const std::string name = bench::nodeName("sim", i);
    const auto cred = ca.issue(test::agentSpec("bench", name));
    auto signer = core::SnapshotSigner::fromPem(cred.certificate_pem, cred.key_pem);
    if (!signer.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), signer.error().message.c_str());
      return 4;
    }
    auto envelope = signer->sign(bench::syntheticNode(templates, i, name, "4242"));
    if (!envelope.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), envelope.error().message.c_str());
      return 4;
    }
    // srun --label puts the task number first, as the launcher hears it from real srun.
    for (const auto& line : core::encodeStepOutput(name, envelope->SerializeAsString()))
      steps << i << ": " << line;
  }
  steps.close();
  const std::string last = bench::nodeName("", n - 1);
  const std::string nodes = "sim[0000-" + last + "]";
  ::mkdir((out_dir + "/bin").c_str(), 0755);
  const bool ok =
      steps.good() &&
      writeScript(out_dir + "/bin/srun", "exec cat '" + out_dir + "/step-output.txt'\n") &&
      writeScript(out_dir + "/bin/sinfo", "exit 0\n") &&
      writeScript(out_dir + "/bin/scontrol",
                  "case \"$2\" in\n"
                  "  job) echo 'JobId=4242 JobName=bench UserId=bench(4242) JobState=RUNNING "
                  "Reason=None NumNodes=" +
                      std::to_string(n) + " NodeList=" + nodes +
                      "' ;;\n"
                      "  *) exit 1 ;;\n"
                      "esac\n");
  if (!ok) {
    std::fprintf(stderr, "cannot write into %s\n", out_dir.c_str());
    return 4;
  }
  std::printf("%d nodes (%s) in %s\n", n, nodes.c_str(), out_dir.c_str());
  return 0;
}
