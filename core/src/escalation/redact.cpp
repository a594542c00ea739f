#include "ibc/core/redact.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <optional>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

bool wordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}
bool hexOrSep(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

// A name worth replacing: host-name characters, not a bare number, not a system account.
bool plausibleName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  bool alpha = false;
  for (char c : s) {
    if (!wordChar(c) && c != '.') return false;
    if (std::isalpha(static_cast<unsigned char>(c))) alpha = true;
  }
  if (!alpha) return false;
  const std::string lower = toLower(s);
  return lower != "localhost" && lower != "root" && lower != "nobody" && lower != "unknown" &&
         lower != "none" && lower != "null";
}

bool ipv6(std::string_view s) {
  if (s.size() < 3 || s.size() > 45) return false;
  const std::string z(s);
  in6_addr a{};
  return inet_pton(AF_INET6, z.c_str(), &a) == 1;
}

// perftest prints a GID as 16 decimal bytes ("GID: 00:00:...:255:255:192:168:02:226"): the
// address it holds, as the key its other spellings get (an IPv4-mapped GID is its IPv4).
std::optional<std::string> perftestGidKey(std::string_view run) {
  const auto parts = split(run, ':');
  if (parts.size() != 16) return std::nullopt;
  std::array<unsigned char, 16> b{};
  for (std::size_t k = 0; k < 16; ++k) {
    const auto v = parseInt(parts[k]);
    if (parts[k].empty() || parts[k].size() > 3 || !v || *v < 0 || *v > 255) return std::nullopt;
    b[k] = static_cast<unsigned char>(*v);
  }
  const bool mapped =
      std::all_of(b.begin(), b.begin() + 10, [](unsigned char c) { return c == 0; }) &&
      b[10] == 255 && b[11] == 255;
  if (mapped) {
    return std::to_string(b[12]) + "." + std::to_string(b[13]) + "." + std::to_string(b[14]) + "." +
           std::to_string(b[15]);
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET6, b.data(), text, sizeof text) == nullptr) return std::nullopt;
  return toLower(text);
}

}  // namespace

std::string Redactor::pseudonym(std::unordered_map<std::string, std::string>& table,
                                std::string_view key, std::string_view prefix) {
  auto it = table.find(std::string(key));
  if (it != table.end()) return it->second;
  // Pseudonyms are numbered per kind; aliases (the short name of an FQDN) share one, so the
  // number counts distinct pseudonyms, not keys.
  std::size_t distinct = 0;
  for (const auto& [k, v] : table) {
    (void)k;
    std::size_t n = 0;
    if (std::sscanf(v.c_str() + prefix.size() + 1, "%zu", &n) == 1)
      distinct = std::max(distinct, n);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s-%03zu", std::string(prefix).c_str(), distinct + 1);
  table.emplace(std::string(key), buf);
  return buf;
}

void Redactor::addHost(std::string_view name) {
  name = trim(name);
  while (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (!plausibleName(name) || ipv6(name)) return;
  const std::string lower = toLower(name);
  const std::string p = pseudonym(hosts_, lower, "node");
  longest_name_ = std::max(longest_name_, lower.size());
  const std::size_t dot = lower.find('.');
  if (dot != std::string::npos && dot > 0) {
    hosts_.emplace(lower.substr(0, dot), p);  // node01 of node01.cluster: the same host
    std::size_t labels = 1;
    for (char c : lower) labels += c == '.' ? 1 : 0;
    longest_host_labels_ = std::max(longest_host_labels_, labels);
  }
}

void Redactor::addUser(std::string_view name) {
  if (!plausibleName(name) || name.size() > 64) return;
  pseudonym(users_, toLower(name), "user");
  longest_name_ = std::max(longest_name_, name.size());
}

std::string Redactor::hostPseudonym(std::string_view name) {
  addHost(name);
  auto it = hosts_.find(toLower(trim(name)));
  return it != hosts_.end() ? it->second : std::string(name);
}

void Redactor::learnUsers(std::string_view text) {
  static constexpr std::string_view kMarkers[] = {
      "/home/", "/Users/", "USER=", "LOGNAME=", "UserId=", "~"};
  for (std::string_view marker : kMarkers) {
    std::size_t pos = 0;
    while ((pos = text.find(marker, pos)) != std::string_view::npos) {
      pos += marker.size();
      std::size_t end = pos;
      while (end < text.size() && (wordChar(text[end]) || text[end] == '.')) ++end;
      std::string_view name = text.substr(pos, end - pos);
      while (!name.empty() && name.back() == '.') name.remove_suffix(1);
      // "~user/" only: a bare "~" or "~/" is the reader's own home.
      const bool ok = marker != "~" || (end < text.size() && text[end] == '/');
      if (ok && !name.empty()) addUser(name);
      pos = end;
    }
  }
}

void Redactor::learn(const ::ibcollect::v1::Snapshot& snapshot) {
  namespace pb = google::protobuf;
  // Every string of the snapshot, by field name: host names where a field says so, user
  // names wherever a path or environment line shows one.
  std::vector<const pb::Message*> stack{&snapshot};
  while (!stack.empty()) {
    const pb::Message* m = stack.back();
    stack.pop_back();
    const pb::Reflection* r = m->GetReflection();
    std::vector<const pb::FieldDescriptor*> fields;
    r->ListFields(*m, &fields);
    for (const auto* f : fields) {
      const std::string& fname = f->name();
      const bool host_field = fname == "hostname" || fname == "slurm_node" || fname == "host" ||
                              fname == "hosts" || fname == "node_desc";
      if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        if (f->is_repeated()) {
          for (int i = 0; i < r->FieldSize(*m, f); ++i)
            stack.push_back(&r->GetRepeatedMessage(*m, f, i));
        } else {
          stack.push_back(&r->GetMessage(*m, f));
        }
        continue;
      }
      if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) continue;
      const int n = f->is_repeated() ? r->FieldSize(*m, f) : 1;
      for (int i = 0; i < n; ++i) {
        std::string scratch;
        const std::string& v = f->is_repeated() ? r->GetRepeatedStringReference(*m, f, i, &scratch)
                                                : r->GetStringReference(*m, f, &scratch);
        if (host_field) {
          if (fname == "node_desc") {
            // "node01 mlx5_0", "node01 HCA-1": the host is the first word of two or more.
            const auto words = splitWhitespace(v);
            if (words.size() >= 2) addHost(words.front());
          } else {
            addHost(v);
          }
        }
        if (f->type() == pb::FieldDescriptor::TYPE_STRING) learnUsers(v);
      }
    }
  }
}

std::string Redactor::replaceAddresses(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  // IPv6 first, so an IPv4-mapped address ("::ffff:10.0.0.1") goes whole.
  std::size_t i = 0;
  while (i < text.size()) {
    if (!hexOrSep(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && hexOrSep(text[end])) ++end;
    std::string_view run = text.substr(i, end - i);
    if (const auto gid = perftestGidKey(run); gid && !(end < text.size() && wordChar(text[end]))) {
      out += pseudonym(ips_, *gid, "ip");
      i = end;
      continue;
    }
    // Where the address may start in the run. Alone: at its start. Glued to a word: after
    // the word's colon ("node01:fe80::1"), else at the run's start or a few hex letters in
    // (NCCL prints "remoteGidsfd00:1148:...": the word ends in hex letters).
    const bool glued = i > 0 && wordChar(text[i - 1]);
    std::vector<std::size_t> starts;
    if (glued) {
      if (const std::size_t colon = run.find(':'); colon != std::string_view::npos)
        starts.push_back(colon + 1);
      for (std::size_t k = 0; k <= 4 && k < run.size(); ++k) starts.push_back(k);
    } else {
      starts.push_back(0);
    }
    const bool next_word = end < text.size() && wordChar(text[end]);
    bool replaced = false;
    for (const std::size_t start : starts) {
      std::string_view cand = run.substr(start);
      std::size_t lead = 0;
      if (!cand.empty() && cand[0] == ':' && (cand.size() < 2 || cand[1] != ':')) lead = 1;
      cand.remove_prefix(lead);
      while (!cand.empty() && (cand.back() == '.' || (cand.back() == ':' && !endsWith(cand, "::"))))
        cand.remove_suffix(1);
      if (next_word || std::count(cand.begin(), cand.end(), ':') < 2 || !ipv6(cand)) continue;
      out.append(run.substr(0, start + lead));
      out += pseudonym(ips_, toLower(cand), "ip");
      out.append(run.substr(start + lead + cand.size()));
      replaced = true;
      break;
    }
    if (!replaced) out.append(run);
    i = end;
  }
  // IPv4 dotted quads, wherever they start (a version string that looks like one goes too).
  std::string result;
  result.reserve(out.size());
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  i = 0;
  while (i < out.size()) {
    if (!digit(out[i]) || (i > 0 && (digit(out[i - 1]) || out[i - 1] == '.'))) {
      result += out[i++];
      continue;
    }
    std::size_t j = i;
    int parts = 0;
    bool valid = true;
    while (parts < 4) {
      std::size_t k = j;
      while (k < out.size() && digit(out[k]) && k - j < 4) ++k;
      if (k == j || k - j > 3 || std::stoi(out.substr(j, k - j)) > 255) {
        valid = false;
        break;
      }
      ++parts;
      j = k;
      if (parts < 4) {
        if (j >= out.size() || out[j] != '.') {
          valid = false;
          break;
        }
        ++j;
      }
    }
    const bool more = j < out.size() &&
                      (digit(out[j]) || (out[j] == '.' && j + 1 < out.size() && digit(out[j + 1])));
    if (valid && !more) {
      result += pseudonym(ips_, out.substr(i, j - i), "ip");
      i = j;
    } else {
      result += out[i++];
    }
  }
  return result;
}

std::string Redactor::replaceNames(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (!wordChar(text[i]) || (i > 0 && (wordChar(text[i - 1]) || text[i - 1] == '.'))) {
      out += text[i++];
      continue;
    }
    // The dotted chain of labels from here: "node01.cluster.local".
    std::vector<std::size_t> ends;
    std::size_t j = i;
    while (ends.size() < std::max<std::size_t>(longest_host_labels_, 1) + 1) {
      std::size_t k = j;
      while (k < text.size() && wordChar(text[k])) ++k;
      if (k == j) break;
      ends.push_back(k);
      if (k + 1 < text.size() && text[k] == '.' && wordChar(text[k + 1])) {
        j = k + 1;
      } else {
        break;
      }
    }
    bool replaced = false;
    for (std::size_t n = ends.size(); n > 0 && !replaced; --n) {
      const std::string key = toLower(text.substr(i, ends[n - 1] - i));
      auto h = hosts_.find(key);
      auto u = h == hosts_.end() ? users_.find(key) : users_.end();
      if (h != hosts_.end() || u != users_.end()) {
        out += h != hosts_.end() ? h->second : u->second;
        i = ends[n - 1];
        replaced = true;
      }
    }
    if (!replaced) {
      out.append(text.substr(i, ends.front() - i));
      i = ends.front();
    }
  }
  return out;
}

namespace {

// "node-001", "ip-042", "user-003": a pseudonym this class wrote.
bool isPseudonymAt(std::string_view text, std::size_t i, std::size_t* length) {
  for (std::string_view prefix : {"node-", "user-", "ip-"}) {
    if (text.substr(i, prefix.size()) != prefix) continue;
    std::size_t j = i + prefix.size();
    const std::size_t digits = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j - digits >= 3) {
      *length = j - i;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string Redactor::replaceEmbeddedNames(std::string_view text) {
  if (hosts_.empty() && users_.empty()) return std::string(text);
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const bool boundary = alnum(text[i]) && (i == 0 || !alnum(text[i - 1]));
    if (!boundary) {
      out += text[i++];
      continue;
    }
    std::size_t skip = 0;
    if (isPseudonymAt(text, i, &skip)) {
      out.append(text.substr(i, skip));
      i += skip;
      continue;
    }
    // The longest known name that starts here and ends before a non-alphanumeric byte:
    // "nccl.node3.log", "node3_rank0.txt", "/scratch/alice-runs".
    std::size_t best = 0;
    const std::string* pseudo = nullptr;
    std::string lower;
    for (std::size_t j = i; j < text.size() && j - i < longest_name_; ++j) {
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
      if (j + 1 < text.size() && alnum(text[j + 1])) continue;
      if (lower.size() < kMinEmbeddedName) continue;
      if (auto h = hosts_.find(lower); h != hosts_.end()) {
        best = lower.size();
        pseudo = &h->second;
      } else if (auto u = users_.find(lower); u != users_.end()) {
        best = lower.size();
        pseudo = &u->second;
      }
    }
    if (pseudo != nullptr) {
      out += *pseudo;
      i += best;
      continue;
    }
    while (i < text.size() && alnum(text[i])) out += text[i++];
  }
  return out;
}

std::string Redactor::redact(std::string_view text) {
  learnUsers(text);
  return replaceEmbeddedNames(replaceNames(replaceAddresses(text)));
}

std::string Redactor::mapText() const {
  std::vector<std::string> lines;
  for (const auto* table : {&hosts_, &ips_, &users_}) {
    for (const auto& [original, pseudonym] : *table) lines.push_back(pseudonym + "\t" + original);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace ibc::core
