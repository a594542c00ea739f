#pragma once

// Ground-truth labels of real captures, read from their folder's PROVENANCE.md: an entry
// starts with "## <file>.txt" and is labelled by
//   * Expected codes: PF_MODULE, PF_PCIE_ERRORS     (exactly these codes, any severity)
//   * Forbidden codes: PF_FW                          (optional)
//   * Known miss: <why>                               (optional: reported, not failed)

#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace ibc::test {

struct CaptureLabel {
  std::set<std::string> expected;
  std::set<std::string> forbidden;
  std::string known_miss;
  bool has_expected = false;
};

// The codes of a label line ("PF_MODULE, PF_PCIE_ERRORS (mail-wrapped)" → both codes and
// the words in brackets: labels are written as codes only).
inline std::set<std::string> codeList(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  for (char c : text + ",") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word.push_back(c);
    } else if (!word.empty()) {
      out.insert(word);
      word.clear();
    }
  }
  return out;
}

// Every labelled entry of a PROVENANCE.md, by file name.
inline std::map<std::string, CaptureLabel> captureLabels(const std::string& provenance) {
  std::map<std::string, CaptureLabel> out;
  std::istringstream in(provenance);
  std::string line;
  CaptureLabel* cur = nullptr;
  auto after = [&](const std::string& prefix) -> std::string {
    return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : std::string();
  };
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      const std::string name = line.substr(3);
      cur = name.size() > 4 && name.substr(name.size() - 4) == ".txt" ? &out[name] : nullptr;
      continue;
    }
    if (!cur) continue;
    if (const auto e = after("* Expected codes:"); !e.empty()) {
      cur->expected = codeList(e);
      cur->has_expected = true;
    }
    if (const auto f = after("* Forbidden codes:"); !f.empty()) cur->forbidden = codeList(f);
    if (const auto k = after("* Known miss:"); !k.empty()) cur->known_miss = k;
  }
  return out;
}

// "A, B" or "(none)".
inline std::string joinedCodes(const std::set<std::string>& s) {
  std::string out;
  for (const auto& c : s) out += (out.empty() ? "" : ", ") + c;
  return out.empty() ? "(none)" : out;
}

}  // namespace ibc::test
