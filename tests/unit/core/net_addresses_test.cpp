// Interface addresses from /proc/net (net_addresses.cpp). The texts are SYNTHETIC, in the
// exact formats the kernel prints (net/ipv6/addrconf.c if6_seq_show, net/ipv4/fib_trie.c
// fib_trie_seq_show, fib_route_seq_show).

#include "ibc/core/net_addresses.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ibc::core {
namespace {

TEST(NetAddresses, IfInet6GivesEachInterfacesAddressesWithoutLoopback) {
  const auto a = ipv6Addresses(
      "00000000000000000000000000000001 01 80 10 80       lo\n"
      "fe800000000000000ec42afffe1b2c3d 04 40 20 80      ib0\n"
      "fd001148900050000004020000030f1f 05 40 00 80 ens1f0np0\n");
  EXPECT_EQ(a.count("lo"), 0u);
  ASSERT_EQ(a.count("ib0"), 1u);
  EXPECT_EQ(a.at("ib0"), std::vector<std::string>{"fe80::ec4:2aff:fe1b:2c3d"});
  EXPECT_EQ(a.at("ens1f0np0"), std::vector<std::string>{"fd00:1148:9000:5000:4:200:3:f1f"});
  EXPECT_TRUE(ipv6Addresses("garbage\n\n12 34\n").empty());
}

TEST(NetAddresses, LocalIpv4AddressesBelongToTheirConnectedRoutesInterface) {
  const std::string fib =
      "Main:\n"
      "  +-- 0.0.0.0/0 3 0 5\n"
      "     |-- 0.0.0.0\n"
      "        /0 universe UNICAST\n"
      "     +-- 10.2.0.0/16 2 0 2\n"
      "        |-- 10.2.0.7\n"
      "           /32 host LOCAL\n"
      "     |-- 192.168.1.20\n"
      "        /32 host LOCAL\n"
      "Local:\n"
      "  +-- 127.0.0.0/8 2 0 2\n"
      "     |-- 127.0.0.1\n"
      "        /32 host LOCAL\n"
      "     |-- 10.2.0.7\n"
      "        /32 host LOCAL\n";
  const std::string route =
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      "eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
      "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
      "ib0\t0000020A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n";
  const auto a = ipv4Addresses(fib, route);
  ASSERT_EQ(a.count("ib0"), 1u);
  EXPECT_EQ(a.at("ib0"), std::vector<std::string>{"10.2.0.7"});  // once, though listed twice
  EXPECT_EQ(a.at("eth0"), std::vector<std::string>{"192.168.1.20"});
  EXPECT_EQ(a.count("lo"), 0u);
  // Without routes nothing is placed: an address is never guessed onto an interface.
  EXPECT_TRUE(ipv4Addresses(fib, "").empty());
}

}  // namespace
}  // namespace ibc::core
