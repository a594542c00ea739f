#pragma once

// Interface addresses from the kernel's /proc/net files, as read live or from a copied tree
// (`--root`): NCCL names its peers by the address of their IPoIB or RoCE interface, which
// the job verdict joins to the node that holds it.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ibc::core {

// Interface name → addresses, in the order the files list them.
using InterfaceAddresses = std::map<std::string, std::vector<std::string>>;

// /proc/net/if_inet6: "fe80000000000000020c29fffe5f8a51 02 40 20 80     eth0" per address.
InterfaceAddresses ipv6Addresses(std::string_view if_inet6);

// IPv4 has no per-interface file: the local addresses are fib_trie's "/32 host LOCAL" leaves,
// and each belongs to the interface whose directly connected route in /proc/net/route (no
// gateway; destination and mask as the kernel prints them, little-endian hex) covers it, the
// longest mask winning. Loopback addresses (127/8) are left out.
InterfaceAddresses ipv4Addresses(std::string_view fib_trie, std::string_view route);

}  // namespace ibc::core
