// Benchmark (on demand, not in CI): what a decompression bomb costs the commands that read
// bundles. Writes SYNTHETIC bombs (bundle_bomb.h: MEMBERS members of 64 MiB of zeros, 4 GiB in
// all by default, ~150 KB on disk) in three shapes — no manifest, a forged manifest (signed
// by a support certificate of a CA not trusted), and a genuine signed manifest with the zeros
// added — then runs `bundle verify`, `bundle show` and `host-inspect --bundle` of each with the
// given ibcollect binaries, and prints wall time and peak RSS (wait4) per run. Target (issue
// 27): refused in under 1 s within the reader's documented bound (bundle_archive.h).
//
// usage: ibc_bench_bundle_bomb WORKDIR IBCOLLECT_SUPPORT [BEFORE] [MEMBERS]  (the binary that
// runs `bundle` and `host-inspect`)

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bundle_bomb.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/core/bundle.h"
#include "ibc/core/snapshot_file.h"
#include "test_pki.h"

extern char** environ;

namespace {

using namespace ibc;
namespace v1 = ::ibcollect::v1;

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

core::SnapshotSigner signerOf(const test::TestCredential& c) {
  return std::move(*core::SnapshotSigner::fromPem(c.certificate_pem, c.key_pem));
}

// A genuine one-node bundle exported by `exporter`.
core::BundleMembers exported(const test::TestCredential& node,
                             const test::TestCredential& exporter) {
  v1::Snapshot s;
  s.set_schema_version(1);
  s.mutable_node()->set_hostname("gpu07");
  s.mutable_node()->set_job_id("4242");
  s.mutable_node()->set_collected_at_unix_ms(1700000060000);
  auto env = signerOf(node).sign(s);
  core::BundleExportOptions o;
  o.ibcollect_version = "bench";
  o.created_unix_ms = 1700000100000;
  return *core::buildBundle({{core::encodeSnapshotFile(*env), "a.ibsnap"}}, o, signerOf(exporter));
}

struct Run {
  double seconds = 0;
  long max_rss_kib = 0;
  int exit_code = -1;
};

Run run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  Run r;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) return r;
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.max_rss_kib = ru.ru_maxrss;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  posix_spawn_file_actions_destroy(&fa);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s WORKDIR IBCOLLECT [IBCOLLECT_BEFORE] [MEMBERS]\n", argv[0]);
    return 3;
  }
  const std::string dir = argv[1];
  std::vector<std::pair<std::string, std::string>> binaries{{"after", argv[2]}};
  if (argc > 3 && std::string(argv[3]) != "-") binaries.push_back({"before", argv[3]});
  const int members = argc > 4 ? std::atoi(argv[4]) : 64;
  std::filesystem::create_directories(dir);

  const auto ca = test::TestCa::create("bench CA");
  const auto node = ca.issue(test::agentSpec("acme", "gpu07"));
  const auto alice = ca.issue(test::supportSpec("alice"));
  const auto other = test::TestCa::create("a forger's CA");
  const auto mallory = other.issue(test::supportSpec("mallory"));
  writeFile(dir + "/ca.pem", ca.certificatePem());

  const auto forged = exported(node, mallory);
  const std::vector<std::pair<std::string, core::BundleMembers>> shapes{
      {"no manifest", {}},
      {"forged manifest",
       {{"manifest.json", forged.at("manifest.json")},
        {"manifest.sig", forged.at("manifest.sig")}}},
      {"signed + added", exported(node, alice)}};
  std::printf("decompression bombs: %d members x 64 MiB of zeros (%d MiB inflated)\n", members,
              members * 64);
  std::printf("%-16s %-10s %-7s %10s %8s %12s %5s\n", "bomb", "command", "binary", "file KB",
              "wall s", "peak RSS MiB", "exit");
  int i = 0;
  for (const auto& [shape, head] : shapes) {
    const std::string path = dir + "/bomb-" + std::to_string(i++) + ".ibbundle";
    const auto size = test::writeZeroBomb(path, head, members, 64u << 20);
    for (const auto& [label, bin] : binaries) {
      const std::vector<std::pair<std::string, std::vector<std::string>>> commands{
          {"verify", {bin, "bundle", "verify", path, "--ca", dir + "/ca.pem"}},
          {"show", {bin, "bundle", "show", path}},
          {"inspect",
           {bin, "host-inspect", "--bundle", path, "--ca", dir + "/ca.pem", "--root", dir}}};
      for (const auto& [name, args] : commands) {
        const Run r = run(args);
        std::printf("%-16s %-10s %-7s %10.0f %8.2f %12.0f %5d\n", shape.c_str(), name.c_str(),
                    label.c_str(), size / 1024.0, r.seconds, r.max_rss_kib / 1024.0, r.exit_code);
        std::fflush(stdout);
      }
    }
    std::filesystem::remove(path);
  }
  return 0;
}
