#include "ibc/core/step_output.h"

#include "ibc/core/encoding.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

// srun --label splits output lines at 1,024 bytes; every line stays below that.
constexpr std::size_t kMaxLineBytes = 1000;
// Bounds for untrusted channel input: a node's envelope and the number of chunks.
constexpr std::size_t kMaxChunks = 64u << 10;

}  // namespace

std::vector<std::string> encodeStepOutput(std::string_view node, std::string_view envelope) {
  const std::string b64 = base64Encode(envelope);
  const std::string prefix = std::string(kStepMagic) + " " + std::string(node) + " ";
  // Room for "<seq>/<count> " (at most 12 + 1 digits for our bounds) and the newline.
  std::size_t chunk =
      prefix.size() + 16 < kMaxLineBytes - 256 ? kMaxLineBytes - prefix.size() - 16 : 256;
  chunk -= chunk % 4;  // base64 quanta: chunks never split a 4-character group
  const std::size_t count = b64.empty() ? 1 : (b64.size() + chunk - 1) / chunk;
  std::vector<std::string> lines;
  lines.reserve(count + 1);
  for (std::size_t i = 0; i < count; ++i) {
    lines.push_back(prefix + std::to_string(i + 1) + "/" + std::to_string(count) + " " +
                    b64.substr(i * chunk, chunk) + "\n");
  }
  lines.push_back(prefix + "end " + sha256Hex(envelope) + "\n");
  return lines;
}

std::string encodeStepError(std::string_view node, std::string_view message) {
  std::string flat(message.substr(0, 2048));
  for (char& c : flat) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const std::string m = printable(flat, 2048);
  return std::string(kStepMagic) + " " + std::string(node) + " error " + m + "\n";
}

std::string StepOutputCollector::addLine(std::string_view line) {
  // srun --label prefixes "N: "; tolerate anything before the magic.
  const auto at = line.find(kStepMagic);
  if (at == std::string_view::npos) {
    ++ignored_;
    return {};
  }
  std::string_view rest = line.substr(at + kStepMagic.size());
  const auto fields = splitWhitespace(rest);
  if (fields.size() < 2) {
    ++ignored_;
    return {};
  }
  const std::string node(fields[0]);
  const std::string_view kind = fields[1];
  if (results_.count(node) != 0 && results_[node].complete) {
    ++ignored_;  // duplicate after completion
    return {};
  }
  if (kind == "error") {
    const auto pos = rest.find("error");
    NodeResult& r = results_[node];
    r.complete = true;
    r.error = std::string(trim(rest.substr(pos + 5)));
    partial_.erase(node);
    return node;
  }
  if (kind == "end") {
    NodeResult& r = results_[node];
    r.complete = true;
    Partial& p = partial_[node];
    if (fields.size() < 3 || p.expected == 0 || p.received != p.expected) {
      r.error = "incomplete snapshot: " + std::to_string(p.received) + " of " +
                std::to_string(p.expected) + " chunks arrived";
    } else {
      std::string b64;
      for (const auto& c : p.chunks) b64 += c;
      auto bytes = base64Decode(b64);
      if (!bytes.ok()) {
        r.error = "corrupt snapshot on the channel: " + bytes.error().message;
      } else if (sha256Hex(*bytes) != fields[2]) {
        r.error = "corrupt snapshot on the channel: digest mismatch";
      } else {
        r.envelope = std::move(bytes).value();
      }
    }
    partial_.erase(node);
    return node;
  }
  // "<seq>/<count> <chunk>"
  const auto slash = kind.find('/');
  if (slash == std::string_view::npos || fields.size() < 3) {
    ++ignored_;
    return {};
  }
  const auto seq = parseInt(kind.substr(0, slash));
  const auto count = parseInt(kind.substr(slash + 1));
  if (!seq || !count || *count <= 0 || *seq <= 0 || *seq > *count ||
      static_cast<std::size_t>(*count) > kMaxChunks) {
    ++ignored_;
    return {};
  }
  Partial& p = partial_[node];
  if (p.expected == 0) {
    p.expected = static_cast<uint32_t>(*count);
    p.chunks.assign(p.expected, std::string());
  }
  if (static_cast<uint32_t>(*count) != p.expected ||
      !p.chunks[static_cast<std::size_t>(*seq - 1)].empty()) {
    ++ignored_;
    return {};
  }
  p.chunks[static_cast<std::size_t>(*seq - 1)] = std::string(fields[2]);
  ++p.received;
  return {};
}

std::vector<std::string> StepOutputCollector::incomplete() const {
  std::vector<std::string> out;
  for (const auto& [node, p] : partial_) out.push_back(node);
  return out;
}

}  // namespace ibc::core
