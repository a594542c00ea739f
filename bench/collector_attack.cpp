// collector_attack_bench: honest agents' upload latency against a real `ibcollect-collector`
// (default limits) at rest and while each attack of issue 11 runs at the strength the
// red-team used:
//   3. complete TLS ClientHellos that then stall, 16 per second, no certificate needed;
//   4. 10,050 silent TCP sockets held open;
//   5. 1,024 connections of one tenant, each announcing a 60 MiB frame and sending 1 byte.
// Each honest sample is a whole upload: new TCP connection, mutual-TLS handshake, a signed
// snapshot, the collector's durable ack. Prints p50/p99/max per phase; no assertions.
//
//   collector_attack_bench --collector BIN --make-pki SCRIPT [--samples 100]
//
// Attackers use source addresses 127.0.0.2 and up (the whole of 127/8 is loopback on
// Linux), the honest agent 127.0.0.1. On demand, never in CI (bench/README.md).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collector_process.h"
#include "ibc/agent/upload.h"
#include "ibc/core/frame.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace v1 = ::ibcollect::v1;
using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

int connectFrom(int port, const std::string& source) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A process's resident memory (VmRSS), MiB; -1 when unknown.
long rssMiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
  }
  return -1;
}

std::string attackerAddress(int n) {  // 127.0.0.2 ... 127.0.250.254
  return "127.0." + std::to_string(n / 253) + "." + std::to_string(2 + n % 253);
}

using ibc::bench::startCollector;

ibc::agent::TlsCredentials credentials(const std::string& pki, const std::string& tenant,
                                       const std::string& node) {
  const std::string base = pki + "/agents/" + tenant + "/" + node;
  return {readAll(pki + "/ca.pem"), readAll(base + ".pem"), readAll(base + ".key")};
}

// One honest upload, end to end; milliseconds, or -1 when it failed (with the reason).
double honestUpload(int port, const ibc::agent::TlsCredentials& creds,
                    const ibc::core::SnapshotSigner& signer, int serial, std::string& why) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname("node01");
  s.mutable_node()->set_job_id("bench");
  s.mutable_node()->set_collected_at_unix_ms(serial);
  s.mutable_node()->set_kernel(std::string(60u << 10, 'k'));  // a ~64 KiB snapshot
  v1::CollectorRequest r;
  r.mutable_upload()->set_signed_snapshot(ibc::core::serializeEnvelope(*signer.sign(s)));
  const auto t0 = SteadyClock::now();
  auto c = ibc::agent::CollectorConnection::open({"127.0.0.1", static_cast<uint16_t>(port)}, creds,
                                                 {seconds(30), seconds(30)});
  if (!c.ok()) {
    why = c.error().message;
    return -1;
  }
  auto answer = (*c)->call(r);
  if (!answer.ok() || !answer->has_ack()) {
    why = answer.ok() ? answer->DebugString() : answer.error().message;
    return -1;
  }
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

struct Phase {
  std::string name;
  std::vector<double> ms;
  int failed = 0;
  std::string last_failure;
};

void measure(Phase& p, int port, const ibc::agent::TlsCredentials& creds,
             const ibc::core::SnapshotSigner& signer, int samples, int& serial) {
  for (int i = 0; i < samples; ++i) {
    std::string why;
    const double ms = honestUpload(port, creds, signer, ++serial, why);
    if (ms < 0) {
      ++p.failed;
      p.last_failure = why;
    } else {
      p.ms.push_back(ms);
    }
    std::this_thread::sleep_for(milliseconds(100));  // an agent's pace, not synchronisation
  }
}

void print(const Phase& p) {
  std::printf("%-44s n=%-4zu p50 %7.1f ms  p99 %7.1f ms  max %7.1f ms  failed %d%s%s\n",
              p.name.c_str(), p.ms.size(), percentile(p.ms, 0.5), percentile(p.ms, 0.99),
              p.ms.empty() ? 0.0 : *std::max_element(p.ms.begin(), p.ms.end()), p.failed,
              p.failed ? "  last: " : "", p.failed ? p.last_failure.substr(0, 120).c_str() : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string collector_bin, make_pki;
  int samples = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--collector") collector_bin = argv[i + 1];
    if (a == "--make-pki") make_pki = argv[i + 1];
    if (a == "--samples") samples = std::stoi(argv[i + 1]);
  }
  if (collector_bin.empty() || make_pki.empty()) {
    std::cerr << "usage: collector_attack_bench --collector BIN --make-pki SCRIPT [--samples N]\n";
    return 3;
  }
  ::signal(SIGPIPE, SIG_IGN);
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &nofile);  // the collector inherits it
  if (nofile.rlim_cur < 12000) {
    std::cerr << "collector_attack_bench: RLIMIT_NOFILE " << nofile.rlim_cur
              << " is too low for 10,050 sockets; run as root or raise `ulimit -Hn`\n";
    return 4;
  }
  char tmpl[] = "/tmp/ibc-attack-XXXXXX";
  const std::string work = ::mkdtemp(tmpl);
  const std::string pki = work + "/pki";
  ibc::os::ProcessRunner runner;
  auto made =
      runner.run({make_pki, pki, "--agent", "acme/node01", "--agent", "globex/gx01"}, seconds(60));
  if (!made.ok() || made->exit_code != 0) {
    std::cerr << "make-pki failed\n";
    return 4;
  }
  const auto creds = credentials(pki, "acme", "node01");
  auto signer = ibc::core::SnapshotSigner::fromPem(creds.certificate_pem, creds.key_pem);
  if (!signer.ok()) return 4;
  int serial = 0;
  std::printf(
      "collector_attack_bench: %d honest uploads per phase, each a new mutual-TLS "
      "connection; collector with default limits\n",
      samples);

  const auto run = [&](const std::string& name,
                       const std::function<void(int, std::atomic<bool>&)>& attack) {
    const auto c = startCollector(collector_bin, pki, work + "/data-" + std::to_string(serial),
                                  work + "/collector-" + std::to_string(serial) + ".log");
    if (c.port == 0) {
      std::cerr << "collector did not start\n";
      std::exit(4);
    }
    Phase warm{"warm-up", {}, 0, {}};
    measure(warm, c.port, creds, *signer, 3, serial);  // the honest source becomes known
    const long rss_before = rssMiB(c.pid);
    std::atomic<bool> stop{false};
    std::thread attacker;
    if (attack) {
      attacker = std::thread([&] { attack(c.port, stop); });
      std::this_thread::sleep_for(seconds(3));  // let the attack reach full strength
    }
    Phase p{name, {}, 0, {}};
    measure(p, c.port, creds, *signer, samples, serial);
    const long rss_during = rssMiB(c.pid);
    stop = true;
    if (attacker.joinable()) attacker.join();
    std::this_thread::sleep_for(seconds(3));  // the collector notices the attack ended
    print(p);
    std::printf(
        "  collector RSS: %ld MiB before the attack, %ld MiB at its end, %ld MiB 3 s after\n",
        rss_before, rss_during, rssMiB(c.pid));
    ibc::bench::stopCollector(c, SIGKILL);
  };

  run("no attack", nullptr);

  run("3: stalled ClientHellos, 16/s from 16 sources", [](int port, std::atomic<bool>& stop) {
    struct Hello {
      SSL* ssl;
      int fd;
    };
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    std::vector<Hello> held;
    for (int n = 0; !stop; ++n) {
      const int fd = connectFrom(port, attackerAddress(n % 16));
      if (fd >= 0) {
        SSL* ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
        SSL_connect(ssl);  // the whole ClientHello, then nothing
        held.push_back({ssl, fd});
      }
      std::this_thread::sleep_for(milliseconds(62));
    }
    for (auto& h : held) {
      SSL_free(h.ssl);
      ::close(h.fd);
    }
    SSL_CTX_free(ctx);
  });

  run("4: 10,050 silent TCP sockets from 100 sources", [](int port, std::atomic<bool>& stop) {
    std::vector<int> fds;
    for (int n = 0; n < 10050 && !stop; ++n) {
      const int fd = connectFrom(port, attackerAddress(n % 100));
      if (fd >= 0) fds.push_back(fd);
    }
    // Silent sockets the collector closed are opened again, for the whole phase.
    while (!stop) {
      for (int& fd : fds) {
        char b;
        if (::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) == 0) {
          ::close(fd);
          fd = connectFrom(port, attackerAddress(static_cast<int>(&fd - fds.data()) % 100));
        }
        if (stop) break;
      }
      std::this_thread::sleep_for(milliseconds(200));
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  });

  const std::string pki_dir = pki;
  run("5: 1,024 x 60 MiB frames of another tenant", [pki_dir](int port, std::atomic<bool>& stop) {
    const auto gx = credentials(pki_dir, "globex", "gx01");
    std::vector<std::unique_ptr<ibc::agent::CollectorConnection>> hogs;
    const uint32_t n = 60u << 20;
    const std::string announce = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                                  static_cast<char>(n >> 8), static_cast<char>(n), '\x52'};
    for (int i = 0; i < 1024 && !stop; ++i) {
      auto c = ibc::agent::CollectorConnection::open({"127.0.0.1", static_cast<uint16_t>(port)}, gx,
                                                     {seconds(10), seconds(10)});
      if (!c.ok()) continue;
      (void)(*c)->sendBytes(announce, seconds(5));
      hogs.push_back(std::move(*c));
    }
    std::fprintf(stderr, "attack 5: %zu connections hold announced 60 MiB frames\n", hogs.size());
    while (!stop) std::this_thread::sleep_for(milliseconds(100));
  });
  fs::remove_all(work);
  return 0;
}
