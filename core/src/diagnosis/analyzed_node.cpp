#include "ibc/core/analyzed_node.h"

#include <ctime>
#include <map>

#include "ibc/core/rules.h"
#include "ibc/core/text.h"

namespace ibc::core {

std::string nodeSource(const AnalyzedNode& node) {
  if (!node.snapshot_file.empty()) return node.snapshot_file;
  return !node.input.empty() ? node.input : node.snapshot.node().source();
}

std::vector<std::string> labelNodes(std::vector<AnalyzedNode>& nodes) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < nodes.size(); ++i) by_name[nodeName(nodes[i].snapshot)].push_back(i);
  std::vector<std::string> notices;
  for (const auto& [name, members] : by_name) {
    if (members.size() == 1) {
      nodes[members[0]].label = name;
      continue;
    }
    // The file's base name tells most collisions apart (before/after, two fetches); the
    // collection time the rest; a counter what is left.
    const auto base = [](const std::string& path) {
      const auto slash = path.find_last_of('/');
      return slash == std::string::npos ? path : path.substr(slash + 1);
    };
    std::map<std::string, int> seen;
    for (std::size_t i : members) seen[base(nodeSource(nodes[i]))]++;
    std::string how = "file";
    for (const auto& [b, k] : seen) {
      if (k > 1 || b.empty()) how = "time";
    }
    std::map<std::string, int> seen_time;
    if (how == "time") {
      for (std::size_t i : members)
        seen_time[formatUtc(nodes[i].snapshot.node().collected_at_unix_ms() / 1000,
                            "%Y-%m-%d %H:%M:%SZ")]++;
      for (const auto& [t, k] : seen_time) {
        if (k > 1) how = "order";
      }
    }
    int k = 0;
    for (std::size_t i : members) {
      ++k;
      const std::string tag =
          how == "file"   ? base(nodeSource(nodes[i]))
          : how == "time" ? formatUtc(nodes[i].snapshot.node().collected_at_unix_ms() / 1000,
                                      "%Y-%m-%d %H:%M:%SZ")
                          : "#" + std::to_string(k);
      nodes[i].label = name + " (" + tag + ")";
    }
    notices.push_back(std::to_string(members.size()) + " inputs name the same node '" + name +
                      "'; they are reported separately, told apart by " +
                      (how == "file"   ? std::string("file name")
                       : how == "time" ? std::string("collection time")
                                       : std::string("input order")));
  }
  return notices;
}

}  // namespace ibc::core
