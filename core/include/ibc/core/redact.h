#pragma once

// Pseudonyms for `bundle export --redact` (docs/formats.md): host names, IP addresses (v4 and v6)
// and user names in text become stable pseudonyms ("node-001", "ip-001", "user-001"), the
// same name always the same pseudonym within one Redactor, numbered in order of first
// appearance. Pure text in, text out.
//
// What is found:
//  - host names learned from snapshots (hostname and its first label, Slurm node name, the
//    host part of an IB node description, every `host`/`hosts` field such as NCCL log and
//    kernel log host prefixes) or added with addHost(), as whole words, case-insensitively;
//    a fully qualified name is replaced whole ("node01.cluster.local" → "node-001");
//  - IPv4 dotted quads and IPv6 addresses in any form inet_pton accepts (GIDs are IPv6
//    addresses and are replaced too: RoCE GIDs carry the interface's IP);
//  - user names after `/home/`, `/Users/`, `USER=`, `LOGNAME=`, `UserId=`, and in `~user/`,
//    learned from every text passed to redact() and from the snapshots, then replaced as whole
//    words everywhere. "root" and "nobody" are not treated as user names;
//  - then host and user names (of kMinEmbeddedName characters or more) inside paths, file
//    names and joined words, wherever they stand between non-alphanumeric bytes
//    ("nccl.node3.log", "node3_rank0", "/scratch/alice-run"); IPv6 addresses and GIDs glued
//    to a word as NCCL prints them ("remoteGidsfd00:1148:...") go too.
// Not thread-safe (it learns as it goes).

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

class Redactor {
 public:
  // Shorter names are replaced as whole words only (a 2-letter host would hit every word).
  static constexpr std::size_t kMinEmbeddedName = 3;

  void addHost(std::string_view name);
  void addUser(std::string_view name);
  // Learns host and user names from every string of the snapshot (see above).
  void learn(const ::ibcollect::v1::Snapshot& snapshot);
  // Learns user names from `text` first, then returns it with every host name, IP address
  // and user name replaced.
  std::string redact(std::string_view text);
  // The pseudonym of a host name (assigned now when new).
  std::string hostPseudonym(std::string_view name);

  // Every pseudonym and what it stands for, one "pseudonym<TAB>original" line each, sorted
  // (an FQDN and its short name share a pseudonym: both lines). For the exporter to keep
  // beside a redacted bundle, never inside it.
  std::string mapText() const;

  // Counts of distinct names replaced so far, for the manifest and tests.
  std::size_t hostCount() const { return hosts_.size(); }
  std::size_t ipCount() const { return ips_.size(); }
  std::size_t userCount() const { return users_.size(); }

 private:
  std::string pseudonym(std::unordered_map<std::string, std::string>& table, std::string_view key,
                        std::string_view prefix);
  void learnUsers(std::string_view text);
  std::string replaceAddresses(std::string_view text);
  std::string replaceNames(std::string_view text);
  std::string replaceEmbeddedNames(std::string_view text);

  std::unordered_map<std::string, std::string> hosts_;  // lower-case name → pseudonym
  std::unordered_map<std::string, std::string> users_;
  std::unordered_map<std::string, std::string> ips_;
  std::size_t longest_host_labels_ = 1;
  std::size_t longest_name_ = 0;  // the longest host or user name learned
};

}  // namespace ibc::core
