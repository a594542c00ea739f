#include "ibc/core/slurm.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

// One "Key=Value" token of scontrol output.
struct ScontrolPair {
  std::string_view key;
  std::string value;  // "(null)" read as empty
};

// `token` as a pair once the markdown emphasis a poster added around a line
// ("**JobState=FAILED") is taken off; nullopt when it is no Key=Value token.
std::optional<ScontrolPair> scontrolPair(std::string_view token) {
  while (startsWith(token, "*")) token.remove_prefix(1);
  while (endsWith(token, "*") && token.find('=') != std::string_view::npos &&
         token.find('=') + 1 < token.size()) {
    token.remove_suffix(1);
  }
  const auto eq = token.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  ScontrolPair pair{token.substr(0, eq), std::string(token.substr(eq + 1))};
  if (pair.value == "(null)") pair.value.clear();
  return pair;
}

// "Key=Value" tokens of one line; values end at the next space (scontrol never puts
// spaces inside values of the keys we read).
void scanPairs(std::string_view line, SlurmJob& job, bool& saw_state, bool& saw_nodes) {
  for (const auto token : splitWhitespace(line)) {
    auto pair = scontrolPair(token);
    if (!pair) continue;
    const std::string_view key = pair->key;
    std::string& value = pair->value;
    if (key == "JobId")
      job.job_id = value;
    else if (key == "JobName")
      job.job_name = value;
    else if (key == "JobState") {
      job.job_state = value;
      saw_state = true;
    } else if (key == "Reason")
      job.reason = value;
    else if (key == "NodeList") {
      job.node_list = value;
      saw_nodes = true;
    } else if (key == "BatchHost")
      job.batch_host = value;
    else if (key == "Partition")
      job.partition = value;
    else if (key == "UserId")
      job.user = value;
    else if (key == "RunTime")
      job.run_time = value;
    else if (key == "ArrayJobId")
      job.array_job_id = value;
    else if (key == "ArrayTaskId")
      job.array_task_id = value;
    else if (key == "NumNodes") {
      // "NumNodes=8" or, for pending jobs, "NumNodes=2-4".
      if (auto n = parseInt(value.substr(0, value.find('-'))); n && *n >= 0) {
        job.num_nodes = static_cast<uint32_t>(*n);
      }
    } else if (key == "NumTasks") {
      if (auto n = parseInt(value); n && *n >= 0) job.num_tasks = static_cast<uint32_t>(*n);
    }
  }
}

}  // namespace

Result<SlurmJob> parseScontrolShowJob(std::string_view text) {
  SlurmJob job;
  bool saw_state = false;
  bool saw_nodes = false;
  forEachLine(text, [&](std::string_view line, uint32_t) {
    // The per-node GRES detail line ("Nodes=node[...] CPU_IDs=...") repeats node names
    // under another key; only top-level Key= tokens are read, so it does no harm.
    scanPairs(line, job, saw_state, saw_nodes);
  });
  if (!saw_state && !saw_nodes) {
    return Error{ErrorCode::Malformed,
                 "not `scontrol show job` output (no JobState= or NodeList=)"};
  }
  return job;
}

std::vector<SlurmNode> parseScontrolShowNodes(std::string_view text) {
  std::vector<SlurmNode> nodes;
  forEachLine(text, [&](std::string_view line, uint32_t) {
    for (const auto token : splitWhitespace(line)) {
      auto pair = scontrolPair(token);
      if (!pair) continue;
      const std::string_view key = pair->key;
      std::string& value = pair->value;
      if (key == "NodeName") {
        nodes.push_back(SlurmNode{std::move(value), "", ""});
      } else if (nodes.empty()) {
        continue;  // a key before any record: not one of a node's
      } else if (key == "Arch") {
        nodes.back().arch = std::move(value);
      } else if (key == "State") {
        nodes.back().state = std::move(value);
      }
    }
  });
  // A record scontrol printed without a name (never seen) cannot be matched to a host.
  nodes.erase(
      std::remove_if(nodes.begin(), nodes.end(), [](const SlurmNode& n) { return n.name.empty(); }),
      nodes.end());
  return nodes;
}

std::string canonicalArch(std::string_view arch) {
  if (arch == "amd64" || arch == "x86-64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  return std::string(arch);
}

bool jobStateIsActive(std::string_view state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED" ||
         state == "CONFIGURING" || state == "STAGE_OUT" || state == "RESIZING" ||
         state == "SIGNALING";
}

namespace {

// Expands one bracket body "1433,1787,1889-1890" into strings keeping zero padding.
Result<std::vector<std::string>> expandRanges(std::string_view body, std::size_t max_hosts) {
  std::vector<std::string> out;
  for (auto part : split(body, ',')) {
    part = trim(part);
    if (part.empty()) return Error{ErrorCode::Malformed, "empty range in hostlist"};
    const auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      out.emplace_back(part);
      continue;
    }
    const std::string_view lo = part.substr(0, dash);
    const std::string_view hi = part.substr(dash + 1);
    const auto a = parseInt(lo);
    const auto b = parseInt(hi);
    if (!a || !b || *a < 0 || *b < *a || lo.empty() || lo.front() == '+' || hi.front() == '+') {
      return Error{ErrorCode::Malformed, "bad range \"" + std::string(part) + "\" in hostlist"};
    }
    if (static_cast<std::size_t>(*b - *a) + out.size() >= max_hosts) {
      return Error{ErrorCode::TooLarge,
                   "hostlist expands to more than " + std::to_string(max_hosts) + " hosts"};
    }
    const std::size_t width = lo.size();
    for (int64_t v = *a; v <= *b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      out.push_back(std::move(s));
    }
  }
  return out;
}

// Expands one comma-free-at-top-level host expression such as "a[1-2]b[3-4]".
Result<std::vector<std::string>> expandOne(std::string_view expr, std::size_t max_hosts) {
  std::vector<std::string> acc{""};
  std::size_t i = 0;
  while (i < expr.size()) {
    if (expr[i] == '[') {
      const auto close = expr.find(']', i);
      if (close == std::string_view::npos)
        return Error{ErrorCode::Malformed, "unbalanced '[' in hostlist"};
      auto parts = expandRanges(expr.substr(i + 1, close - i - 1), max_hosts);
      if (!parts.ok()) return parts.error();
      if (acc.size() * parts->size() > max_hosts) {
        return Error{ErrorCode::TooLarge,
                     "hostlist expands to more than " + std::to_string(max_hosts) + " hosts"};
      }
      std::vector<std::string> next;
      next.reserve(acc.size() * parts->size());
      for (const auto& prefix : acc) {
        for (const auto& p : *parts) next.push_back(prefix + p);
      }
      acc = std::move(next);
      i = close + 1;
    } else if (expr[i] == ']') {
      return Error{ErrorCode::Malformed, "unbalanced ']' in hostlist"};
    } else {
      const auto next = expr.find_first_of("[]", i);
      const std::string_view lit =
          expr.substr(i, next == std::string_view::npos ? std::string_view::npos : next - i);
      for (auto& a : acc) a.append(lit);
      i += lit.size();
    }
  }
  return acc;
}

}  // namespace

Result<std::vector<std::string>> expandHostlist(std::string_view hostlist, std::size_t max_hosts) {
  std::vector<std::string> out;
  std::string_view s = trim(hostlist);
  int depth = 0;
  std::size_t start = 0;
  auto flush = [&](std::size_t end) -> Status {
    const std::string_view expr = trim(s.substr(start, end - start));
    if (expr.empty()) return {};
    auto hosts = expandOne(expr, max_hosts);
    if (!hosts.ok()) return hosts.error();
    if (out.size() + hosts->size() > max_hosts) {
      return Error{ErrorCode::TooLarge,
                   "hostlist expands to more than " + std::to_string(max_hosts) + " hosts"};
    }
    for (auto& h : *hosts) out.push_back(std::move(h));
    return {};
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']') --depth;
    if (depth < 0 || depth > 1)
      return Error{ErrorCode::Malformed, "unbalanced brackets in hostlist"};
    if ((s[i] == ',' || s[i] == ' ') && depth == 0) {
      if (auto st = flush(i); !st.ok()) return st.error();
      start = i + 1;
    }
  }
  if (depth != 0) return Error{ErrorCode::Malformed, "unbalanced brackets in hostlist"};
  if (auto st = flush(s.size()); !st.ok()) return st.error();
  return out;
}

std::string compressHostlist(const std::vector<std::string>& hosts) {
  // Group by the non-numeric prefix and the width of the trailing number.
  struct Key {
    std::string prefix;
    std::size_t width;
    bool operator<(const Key& o) const {
      return std::tie(prefix, width) < std::tie(o.prefix, o.width);
    }
  };
  // Where the trailing number starts, or npos for a name without one (kept as it is).
  auto numberAt = [](const std::string& h) {
    std::size_t d = h.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(h[d - 1]))) --d;
    return d == h.size() || h.size() - d > 18 ? std::string::npos : d;
  };
  // Zero-padded widths per prefix: node0999 and node1000 are one range, node[0999-1000].
  std::set<std::pair<std::string, std::size_t>> padded;
  for (const auto& h : hosts) {
    const std::size_t d = numberAt(h);
    if (d != std::string::npos && h.size() - d > 1 && h[d] == '0')
      padded.insert({h.substr(0, d), h.size() - d});
  }
  std::map<Key, std::vector<int64_t>> groups;
  std::vector<std::string> plain;
  for (const auto& h : hosts) {
    const std::size_t d = numberAt(h);
    if (d == std::string::npos) {
      plain.push_back(h);
      continue;
    }
    const std::string digits = h.substr(d);
    const std::string prefix = h.substr(0, d);
    const bool pads =
        (digits.size() > 1 && digits[0] == '0') || padded.count({prefix, digits.size()}) > 0;
    groups[{prefix, pads ? digits.size() : 0}].push_back(*parseInt(digits));
  }
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  for (auto& [key, nums] : groups) {
    std::sort(nums.begin(), nums.end());
    nums.erase(std::unique(nums.begin(), nums.end()), nums.end());
    const std::size_t width = key.width;  // clang 14 cannot capture structured bindings
    auto fmt = [width](int64_t v) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      return s;
    };
    if (nums.size() == 1) {
      add(key.prefix + fmt(nums[0]));
      continue;
    }
    std::string body;
    for (std::size_t i = 0; i < nums.size();) {
      std::size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1] == nums[j] + 1) ++j;
      body += (body.empty() ? "" : ",") + fmt(nums[i]) + (j > i ? "-" + fmt(nums[j]) : "");
      i = j + 1;
    }
    add(key.prefix + "[" + body + "]");
  }
  for (const auto& p : plain) add(p);
  return out;
}

std::string_view shortHostName(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos) return name;
  if (name.find_first_not_of("0123456789.") == std::string_view::npos) return name;
  return name.substr(0, dot);
}

bool sameHostName(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  return a == b || shortHostName(a) == shortHostName(b);
}

}  // namespace ibc::core
