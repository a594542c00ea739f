#include "ibc/core/net_addresses.h"

#include <arpa/inet.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <optional>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

constexpr std::size_t kMaxAddresses = 4096;

std::optional<uint32_t> hex32(std::string_view s) {
  if (s.empty() || s.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : s) {
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= static_cast<uint32_t>(c - 'A' + 10);
    else
      return std::nullopt;
  }
  return v;
}

// "10.2.0.7" as /proc/net/route prints addresses: the four bytes read as a little-endian word.
std::optional<uint32_t> routeWord(const std::string& dotted) {
  unsigned char b[4];
  if (inet_pton(AF_INET, dotted.c_str(), b) != 1) return std::nullopt;
  return static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
         static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
}

struct Route {
  std::string iface;
  uint32_t dest = 0;
  uint32_t mask = 0;
};

std::vector<Route> connectedRoutes(std::string_view route) {
  std::vector<Route> out;
  forEachLine(route, [&](std::string_view line, uint32_t n) {
    const auto w = splitWhitespace(line);
    if (n == 1 || w.size() < 8) return;  // the header
    const auto dest = hex32(w[1]), gateway = hex32(w[2]), mask = hex32(w[7]);
    if (!dest || !gateway || !mask || *gateway != 0 || out.size() >= kMaxAddresses) return;
    out.push_back({printable(w[0], 64), *dest, *mask});
  });
  return out;
}

}  // namespace

InterfaceAddresses ipv6Addresses(std::string_view if_inet6) {
  InterfaceAddresses out;
  std::size_t count = 0;
  forEachLine(if_inet6, [&](std::string_view line, uint32_t) {
    const auto w = splitWhitespace(line);
    if (w.size() < 6 || w[0].size() != 32 || ++count > kMaxAddresses) return;
    unsigned char bytes[16];
    for (std::size_t i = 0; i < 16; ++i) {
      const auto b = hex32(w[0].substr(2 * i, 2));
      if (!b) return;
      bytes[i] = static_cast<unsigned char>(*b);
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET6, bytes, text, sizeof text) == nullptr) return;
    if (std::string_view(text) == "::1") return;
    out[printable(w[5], 64)].emplace_back(text);
  });
  return out;
}

InterfaceAddresses ipv4Addresses(std::string_view fib_trie, std::string_view route) {
  const auto routes = connectedRoutes(route);
  InterfaceAddresses out;
  std::string last;
  std::size_t count = 0;
  forEachLine(fib_trie, [&](std::string_view line, uint32_t) {
    const std::string_view t = trim(line);
    if (startsWith(t, "|-- ")) {
      last = std::string(trim(t.substr(4)));
      return;
    }
    if (!startsWith(t, "/32 host LOCAL") || last.empty() || startsWith(last, "127.") ||
        ++count > kMaxAddresses)
      return;
    const auto word = routeWord(last);
    if (!word) return;
    const Route* best = nullptr;
    for (const auto& r : routes) {
      if ((*word & r.mask) != r.dest) continue;
      if (best == nullptr || std::bitset<32>(r.mask).count() > std::bitset<32>(best->mask).count())
        best = &r;
    }
    if (best == nullptr) return;
    auto& list = out[best->iface];
    if (std::find(list.begin(), list.end(), last) == list.end()) list.push_back(last);
  });
  return out;
}

}  // namespace ibc::core
