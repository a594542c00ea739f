// Redaction (core/redact.h, docs/formats.md): host names inside paths and file names, addresses
// and GIDs glued to words as NCCL prints them, and every real capture of
// tests/fixtures/real: no host name, IPv4/IPv6 address or GID the capture holds survives.

#include "ibc/core/redact.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "fixtures.h"
#include "ibc/core/kernel_log.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/text.h"

namespace ibc::core {
namespace {

TEST(Redactor, HostNamesInsidePathsAndFileNamesGo) {
  Redactor r;
  r.addHost("node3");
  r.addHost("gpu-h100-r07-12.corp.example");
  EXPECT_EQ(r.redact("--nccl-log /scratch/nccl.node3.log and node3_rank0.txt, node30 stays"),
            "--nccl-log /scratch/nccl.node-001.log and node-001_rank0.txt, node30 stays");
  EXPECT_EQ(r.redact("/var/log/gpu-h100-r07-12/dmesg.txt gpu-h100-r07-12-ib0"),
            "/var/log/node-002/dmesg.txt node-002-ib0");
  // A pseudonym is never redacted again, even when a host is named like its prefix.
  Redactor n;
  n.addHost("node");
  EXPECT_EQ(n.redact("node and node.log"), "node-001 and node-001.log");
  EXPECT_EQ(n.redact(n.redact("node")), "node-001");
}

TEST(Redactor, ThePseudonymMapSaysWhoEachPseudonymIs) {
  Redactor r;
  r.addHost("node3.cluster.local");
  EXPECT_EQ(r.redact("node3 at 10.1.2.3, /home/alice"), "node-001 at ip-001, /home/user-001");
  EXPECT_EQ(r.mapText(),
            "ip-001\t10.1.2.3\nnode-001\tnode3\nnode-001\tnode3.cluster.local\nuser-001\talice\n");
}

TEST(Redactor, UserNamesInsidePathsGo) {
  Redactor r;
  EXPECT_EQ(r.redact("/home/alice/x and /scratch/alice-runs/y"),
            "/home/user-001/x and /scratch/user-001-runs/y");
}

TEST(Redactor, GidsGluedToAWordAsNcclPrintsThemGo) {
  // NCCL 2.2x prints "remoteGids" glued to the GID (a real line of nccl issue 1405).
  Redactor r;
  EXPECT_EQ(r.redact("localGid fd00:1148:9000:5000:4:200:3:ff22 "
                     "remoteGidsfd00:1148:9000:5000:4:200:3:ff1f"),
            "localGid ip-001 remoteGidsip-002");
  EXPECT_EQ(r.redact("remoteGids::ffff:100.123.200.74 hca mlx5_26"),
            "remoteGidsip-003 hca mlx5_26");
  // "host:fe80::1": the address after the word's colon, the word stays.
  EXPECT_EQ(r.redact("node01:fe80::1"), "node01:ip-004");
}

// An address scanner independent of the redactor: dotted quads, and runs of hex digits and
// colons (at least two colons, four hex digits) that inet_pton takes for IPv6, starting
// anywhere in a run.
std::set<std::string> addressesIn(std::string_view text) {
  std::set<std::string> out;
  const auto dig = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!dig(text[i]) || (i > 0 && (dig(text[i - 1]) || text[i - 1] == '.'))) continue;
    std::size_t j = i;
    int parts = 0;
    bool ok = true;
    while (parts < 4 && ok) {
      std::size_t k = j;
      while (k < text.size() && dig(text[k]) && k - j < 4) ++k;
      ok = k > j && k - j <= 3 && std::stoi(std::string(text.substr(j, k - j))) <= 255;
      j = k;
      if (++parts < 4) ok = ok && j < text.size() && text[j] == '.' && ++j;
    }
    const bool more = j < text.size() &&
                      (dig(text[j]) || (text[j] == '.' && j + 1 < text.size() && dig(text[j + 1])));
    if (ok && parts == 4 && !more) out.insert(std::string(text.substr(i, j - i)));
  }
  const auto hexc = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == ':'; };
  for (std::size_t i = 0; i < text.size();) {
    if (!hexc(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && (hexc(text[end]) || text[end] == '.')) ++end;
    const std::string_view run = text.substr(i, end - i);
    // Hardware addresses (MAC, 20-octet IPoIB) and GUIDs are kept on purpose (docs/formats.md);
    // a run glued to a following word is no address ("c10::DistBackendError").
    const bool hardware = run.size() >= 17 && run.size() % 3 == 2 &&
                          std::all_of(run.begin(), run.end(), [&](char c) { return c != '.'; }) &&
                          [&] {
                            for (std::size_t k = 2; k < run.size(); k += 3)
                              if (run[k] != ':') return false;
                            return true;
                          }();
    if (hardware || (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end])))) {
      i = end;
      continue;
    }
    for (std::size_t s = 0; s < run.size(); ++s) {
      for (std::size_t e = run.size(); e > s + 3; --e) {
        const std::string cand(run.substr(s, e - s));
        if (std::count(cand.begin(), cand.end(), ':') < 2 || cand.size() > 45) continue;
        std::size_t hex = 0;
        for (char c : cand) hex += std::isxdigit(static_cast<unsigned char>(c)) ? 1 : 0;
        // No identity in an address of only zeros and F's ("::ffff" of a pasted, already
        // masked "::ffff:xxx.xx.xx.xx").
        if (hex < 4 || cand.find_first_not_of("0fF:.") == std::string::npos) continue;
        in6_addr a{};
        if (inet_pton(AF_INET6, cand.c_str(), &a) == 1) {
          out.insert(cand);
          s = e;  // the longest at this start; go on after it
          break;
        }
      }
    }
    i = end;
  }
  return out;
}

// `name` between non-alphanumeric bytes, case-insensitively, outside pseudonyms.
bool survives(const std::string& text, const std::string& name) {
  const std::string lower = toLower(text), n = toLower(name);
  const auto alnum = [&](std::size_t i) {
    return i < lower.size() && std::isalnum(static_cast<unsigned char>(lower[i]));
  };
  for (std::size_t pos = 0; (pos = lower.find(n, pos)) != std::string::npos; ++pos) {
    const std::size_t after = pos + n.size();
    const bool pseudonym = after + 1 < lower.size() && lower[after] == '-' &&
                           std::isdigit(static_cast<unsigned char>(lower[after + 1]));
    if ((pos == 0 || !alnum(pos - 1)) && !alnum(after) && !pseudonym) return true;
  }
  return false;
}

TEST(Redactor, NoIdentityOfAnyRealCaptureSurvives) {
  namespace fs = std::filesystem;
  std::size_t files = 0, looked_for = 0, found = 0;
  for (const auto& e : fs::recursive_directory_iterator(test::fixturePath("real"))) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name == "PROVENANCE.md" || name == "README.md") continue;
    const std::string rel = fs::relative(e.path(), test::fixturePath("")).string();
    const std::string text = test::readFixture(rel);
    if (text.find('\0') != std::string::npos) continue;  // binary: not text a report quotes
    ++files;
    // What identifies someone in this capture: the host names NCCL and the kernel log
    // print, and every address.
    std::set<std::string> hosts;
    const auto nccl = parseNcclLog(text);
    for (const auto& h : nccl.hosts()) hosts.insert(h);
    const auto kernel = filterKernelLog(text, {"capture", 100000});
    for (const auto& l : kernel.lines()) {
      if (!l.host().empty()) hosts.insert(l.host());
    }
    Redactor r;
    for (const auto& h : hosts) r.addHost(h);
    const std::string out = r.redact(text);
    const auto addresses = addressesIn(text);
    looked_for += addresses.size();
    for (const auto& a : addressesIn(out)) {
      ADD_FAILURE() << rel << ": address '" << a << "' survives";
      ++found;
    }
    for (const auto& h : hosts) {
      // Names of fewer letters than kMinEmbeddedName are replaced as whole words only; what
      // is no host name ("localhost", a "<cluster_name>" the poster put in) is not looked for.
      const bool name_chars = std::all_of(h.begin(), h.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
      if (h.size() < Redactor::kMinEmbeddedName || !name_chars || toLower(h) == "localhost" ||
          !std::any_of(h.begin(), h.end(),
                       [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
        continue;
      ++looked_for;
      if (survives(out, h)) {
        ADD_FAILURE() << rel << ": host '" << h << "' survives";
        ++found;
      }
    }
  }
  EXPECT_GT(files, 50u);
  EXPECT_GT(looked_for, 50u);
  std::cout << "redaction check: " << files << " real captures, " << looked_for
            << " identities looked for, " << found << " found after redaction\n";
}

TEST(Redactor, PerftestsDecimalGidIsTheAddressItHolds) {
  // perftest prints a RoCE GID as 16 decimal bytes; an IPv4-mapped one is that IPv4.
  Redactor r;
  EXPECT_EQ(
      r.redact("client 192.168.2.226\n GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:02:226\n"
               " GID: 254:128:00:00:00:00:00:00:02:66:161:255:254:137:01:10\n"),
      "client ip-001\n GID: ip-001\n GID: ip-002\n");
  // Fewer groups, or a group over 255, is no GID.
  EXPECT_EQ(r.redact("ratio 00:01:02 and 300:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00"),
            "ratio 00:01:02 and 300:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00");
}

TEST(Redactor, PseudonymsAreStableAndCoverEveryForm) {
  Redactor r;
  r.addHost("node01.cluster.local");
  EXPECT_EQ(r.redact("node01 and NODE01.cluster.local, node011 stays"),
            "node-001 and node-001, node011 stays");
  EXPECT_EQ(r.redact("from 10.0.0.1:5000 and 10.0.0.1 and 10.0.0.2"),
            "from ip-001:5000 and ip-001 and ip-002");
  EXPECT_EQ(r.redact("gid ::ffff:10.9.8.7, fe80::1%ib0 and [2001:db8::5]:80"),
            "gid ip-003, ip-004%ib0 and [ip-005]:80");
  EXPECT_EQ(r.redact("mac 00:11:22:33:44:55 time 12:34:56 version 1.2.3"),
            "mac 00:11:22:33:44:55 time 12:34:56 version 1.2.3");
  EXPECT_EQ(r.redact("cd /home/alice/x; USER=bob; alice ran it; bob too; /root stays"),
            "cd /home/user-001/x; USER=user-002; user-001 ran it; user-002 too; /root stays");
  EXPECT_EQ(r.redact("256.1.1.1 is no address"), "256.1.1.1 is no address");
}

}  // namespace
}  // namespace ibc::core
