// Backup benchmark (on demand, not in CI; bench/collector_backup.sh): fills a store with N
// 64 KiB snapshots, starts the real collector on it, keeps an agent uploading, and times
// `ibcollect-collector backup` (a RocksDB checkpoint taken by the running collector).
//   collector_backup_bench --collector BIN --make-pki SCRIPT [--snapshots 4000]
//                          [--work DIR] (default: a new directory under /var/tmp)
//                          [--dest DIR] (default: WORK/backup; another filesystem: copies)

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "collector_process.h"
#include "ibc/agent/upload.h"
#include "ibc/collector/store/maintenance.h"
#include "ibc/collector/store/store.h"
#include "ibc/core/signing.h"
#include "ibc/os/os.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace v1 = ::ibcollect::v1;
using SteadyClock = std::chrono::steady_clock;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double secondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

uint64_t allocatedBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  }
  return total;
}

std::string hexId(uint64_t n) {
  char buf[65];
  std::snprintf(buf, sizeof buf, "%064llx", static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string collector_bin, make_pki, work, dest;
  int snapshots = 4000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--collector") collector_bin = argv[i + 1];
    if (a == "--make-pki") make_pki = argv[i + 1];
    if (a == "--snapshots") snapshots = std::stoi(argv[i + 1]);
    if (a == "--work") work = argv[i + 1];
    if (a == "--dest") dest = argv[i + 1];
  }
  if (collector_bin.empty() || make_pki.empty()) {
    std::cerr << "usage: collector_backup_bench --collector BIN --make-pki SCRIPT "
                 "[--snapshots N] [--work DIR]\n";
    return 3;
  }
  bool own_work = false;
  if (work.empty()) {
    std::string pattern = "/var/tmp/ibc-backup-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) return 4;
    work = pattern;
    own_work = true;
  }
  ibc::os::ProcessRunner runner;
  auto pki = runner.run({make_pki, work + "/pki", "--agent", "acme/node01", "--support", "bench"},
                        std::chrono::seconds(60));
  if (!pki.ok() || pki->exit_code != 0) {
    std::cerr << "make-pki failed\n";
    return 4;
  }

  // 1. A store of N snapshots (random bytes: zstd cannot shrink them).
  const std::string data = work + "/data";
  {
    const auto started = SteadyClock::now();
    auto store = ibc::collector::Store::open(data);
    if (!store.ok()) {
      std::cerr << store.error().message << "\n";
      return 4;
    }
    std::mt19937_64 random(1);
    std::vector<ibc::collector::SnapshotRecord> batch(100);
    for (int n = 0; n < snapshots; n += 100) {
      std::vector<const ibc::collector::SnapshotRecord*> ptrs;
      for (int k = 0; k < 100 && n + k < snapshots; ++k) {
        auto& r = batch[static_cast<std::size_t>(k)];
        r.info.set_snapshot_id(hexId(static_cast<uint64_t>(n + k) + 1));
        r.info.set_tenant("acme");
        r.info.set_job_id("fill");
        r.info.set_node("node" + std::to_string((n + k) % 64));
        r.info.set_collected_at_unix_ms(n + k);
        r.info.set_received_at_unix_ms(n + k);
        r.envelope.resize(64 << 10);
        for (auto& c : r.envelope) c = static_cast<char>(random());
        r.info.set_size_bytes(r.envelope.size());
        ptrs.push_back(&r);
      }
      if (auto put = (*store)->put(ptrs); !put.ok()) {
        std::cerr << put.error().message << "\n";
        return 4;
      }
    }
    auto size = ibc::collector::storeSize(**store);
    std::printf(
        "filled: %d snapshots of 64 KiB in %.1f s, store %.1f MiB\n", snapshots,
        secondsSince(started),
        size.ok() ? static_cast<double>(ibc::collector::totalBytes(*size)) / (1 << 20) : 0.0);
  }

  // 2. The collector on it, and an agent uploading 64 KiB snapshots without pause.
  const auto collector =
      ibc::bench::startCollector(collector_bin, work + "/pki", data, work + "/collector.log");
  if (collector.port == 0) {
    std::cerr << "the collector did not start: see " << work << "/collector.log\n";
    return 4;
  }
  const int port = collector.port;

  const std::string base = work + "/pki/agents/acme/node01";
  auto signer = ibc::core::SnapshotSigner::fromPem(readAll(base + ".pem"), readAll(base + ".key"));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> acked{0};
  std::thread uploader([&] {
    ibc::agent::TlsCredentials creds{readAll(work + "/pki/ca.pem"), readAll(base + ".pem"),
                                     readAll(base + ".key")};
    auto c = ibc::agent::CollectorConnection::open({"127.0.0.1", static_cast<uint16_t>(port)},
                                                   creds, {});
    for (int i = 0; c.ok() && !stop; ++i) {
      v1::Snapshot s;
      s.mutable_node()->set_hostname("node01");
      s.mutable_node()->set_job_id("load");
      s.mutable_node()->set_collected_at_unix_ms(i);
      s.add_nccl_logs()->set_raw(std::string(64 << 10, static_cast<char>('a' + i % 26)));
      v1::CollectorRequest r;
      r.mutable_upload()->set_signed_snapshot(signer->sign(s)->SerializeAsString());
      auto ack = (*c)->call(r);
      if (!ack.ok() || !ack->has_ack()) break;
      ++acked;
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));  // load running before the backup

  // 3. The backup, timed from outside.
  if (dest.empty()) dest = work + "/backup";
  const uint64_t acked_before = acked;
  const auto started = SteadyClock::now();
  auto backup = runner.run({collector_bin, "backup", "--data", data, dest}, std::chrono::hours(1));
  const double took = secondsSince(started);
  const uint64_t acked_during = acked - acked_before;
  stop = true;
  uploader.join();
  ibc::bench::stopCollector(collector);
  if (!backup.ok() || backup->exit_code != 0) {
    std::cerr << "backup failed: " << (backup.ok() ? backup->err : backup.error().message) << "\n";
    return 4;
  }
  std::printf("%s", backup->out.c_str());
  struct stat data_stat {
  }, dest_stat{};
  const bool linked = ::stat(data.c_str(), &data_stat) == 0 &&
                      ::stat(dest.c_str(), &dest_stat) == 0 && data_stat.st_dev == dest_stat.st_dev;
  std::printf(
      "backup under load: %.3f s wall (process start to exit), %.1f MiB in %s (%s), "
      "%llu uploads acknowledged meanwhile\n",
      took, static_cast<double>(allocatedBytes(dest)) / (1 << 20), dest.c_str(),
      linked ? "hard links: the same filesystem, little new space" : "copied",
      static_cast<unsigned long long>(acked_during));
  if (dest.rfind(work, 0) != 0) fs::remove_all(dest);
  if (own_work) fs::remove_all(work);
  return 0;
}
