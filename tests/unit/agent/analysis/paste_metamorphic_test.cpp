// Metamorphic test of reading pasted text (core's paste layer, every parser behind it): each
// real capture of tests/fixtures/real (sysfs trees, which are not pastes, and the Slurm and
// PF folders, judged elsewhere, excepted) is transformed the ways text is mangled on its way
// to a support desk (quoted, wrapped, prefixed by launchers and loggers, stamped, coloured,
// collapsed into one line, put in HTML, ...), each transformation alone and every unordered
// pair of them, and analysed as the user would (`ibcollect analyze --tool-output / --nccl-log
// / --dmesg-file / --nccl-tests`). The codes above info must equal the capture's label (its
// PROVENANCE.md "Expected codes:" line), not the untransformed run.
//
// Transformations the layer does not undo yet are listed in kNotYet with the reason; they
// are counted and printed, not failed, and a listed one that starts to pass fails (so the
// list only shrinks). The figure "kept / total" is printed.

#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/agent/analyze.h"
#include "os_doubles.h"

namespace ibc::agent {
namespace {

using Transform = std::function<std::string(const std::string&)>;

// Each line of `text` through `f`.
std::string perLine(const std::string& text,
                    const std::function<std::string(std::size_t, const std::string&)>& f) {
  std::istringstream in(text);
  std::string line;
  std::string out;
  for (std::size_t i = 0; std::getline(in, line); ++i) out += f(i, line) + "\n";
  return out;
}

// Lines longer than `width` broken at `width` (a terminal) or at the last blank before it
// (a mail client).
std::string wrapped(const std::string& text, std::size_t width, bool at_blank) {
  return perLine(text, [&](std::size_t, const std::string& l) {
    std::string out;
    std::string rest = l;
    while (rest.size() > width) {
      std::size_t cut = width;
      if (at_blank) {
        const auto blank = rest.rfind(' ', width);
        if (blank != std::string::npos && blank > width / 2) cut = blank;
      }
      out += rest.substr(0, cut) + "\n";
      rest = rest.substr(cut);
    }
    return out + rest;
  });
}

const std::vector<std::pair<std::string, Transform>>& transforms() {
  static const std::vector<std::pair<std::string, Transform>> kAll{
      {"quote1",
       [](const std::string& t) { return perLine(t, [](auto, auto& l) { return "> " + l; }); }},
      {"quote3",
       [](const std::string& t) { return perLine(t, [](auto, auto& l) { return "> > > " + l; }); }},
      {"crlf",
       [](const std::string& t) { return perLine(t, [](auto, auto& l) { return l + "\r"; }); }},
      {"ansi",
       [](const std::string& t) {
         return perLine(t, [](auto, auto& l) { return "\x1b[32m" + l + "\x1b[0m"; });
       }},
      {"rank_bracket",
       [](const std::string& t) { return perLine(t, [](auto, auto& l) { return "[0] " + l; }); }},
      {"rank_torch",
       [](const std::string& t) {
         return perLine(t, [](auto, auto& l) { return "[rank3]: " + l; });
       }},
      {"srun_label",
       [](const std::string& t) { return perLine(t, [](auto, auto& l) { return "0: " + l; }); }},
      {"gutter_cat_n",
       [](const std::string& t) {
         return perLine(t, [](std::size_t i, auto& l) {
           std::string n = std::to_string(i + 1);
           return std::string(6 - std::min<std::size_t>(6, n.size()), ' ') + n + "\t" + l;
         });
       }},
      {"iso_time",
       [](const std::string& t) {
         return perLine(t, [](auto, auto& l) { return "2026-11-20T08:15:02.123Z " + l; });
       }},
      {"syslog",
       [](const std::string& t) {
         return perLine(t,
                        [](auto, auto& l) { return "Nov 20 08:15:02 gpu07 collect[4242]: " + l; });
       }},
      {"prompt", [](const std::string& t) { return "user@gpu07:~$ cat output.txt\n" + t; }},
      {"collapse",
       [](const std::string& t) {
         std::string out = "> \"";
         for (char c : t) out += c == '\n' ? std::string("\\n") : std::string(1, c);
         return out + "\"\n";
       }},
      {"mail_wrap72", [](const std::string& t) { return wrapped(t, 72, true); }},
      {"terminal_wrap80", [](const std::string& t) { return wrapped(t, 80, false); }},
      {"html",
       [](const std::string& t) {
         std::string out = "<pre>";
         for (char c : t) {
           if (c == '<')
             out += "&lt;";
           else if (c == '>')
             out += "&gt;";
           else if (c == '&')
             out += "&amp;";
           else
             out.push_back(c);
         }
         return out + "</pre>\n";
       }},
  };
  return kAll;
}

// Family × transformation the layer does not undo yet, with why (see the file's comment).
const std::map<std::pair<std::string, std::string>, std::string>& notYet() {
  static const std::map<std::pair<std::string, std::string>, std::string> kNotYet{
      {{"nccl-logs", "terminal_wrap80"},
       "a wrap is told from at least 3 cut lines: a short log's is not (rejoinWrapped)"},
      {{"nccl-logs", "mail_wrap72"},
       "a wrap is told from at least 3 cut records: a short log's is not (rejoinWrapped)"},
      {{"dmesg", "iso_time"},
       "behind a logger's stamp, a rank, gutter or prompt is not taken off; wrapped after it"},
      {{"dmesg", "syslog"},
       "behind a logger's stamp, a rank, gutter or prompt is not taken off; wrapped after it"},
      {{"dmesg", "terminal_wrap80"}, "only wraps the kernel log parser joins are rejoined"},
      {{"dmesg", "mail_wrap72"}, "only wraps the kernel log parser joins are rejoined"},
      {{"ibtools", "mail_wrap72"}, "wrapped tool lines are not rejoined"},
      {{"ibtools", "terminal_wrap80"}, "wrapped tool lines are not rejoined"},
      {{"ethtool", "mail_wrap72"}, "wrapped tool lines are not rejoined"},
      {{"ibtools", "collapse"}, "a collapsed tool paste with too few lines stays one line"},
      {{"perftest", "collapse"},
       "a collapsed paste that was also wrapped is cut inside a line before it is split"},
  };
  return kNotYet;
}

// "* Expected codes: A B (words)" / "A, B" / "none (...)": the leading codes.
std::set<std::string> expectedCodes(const std::string& provenance, const std::string& file,
                                    bool& found) {
  found = false;
  std::istringstream in(provenance);
  std::string line;
  bool in_entry = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      in_entry = line.substr(3) == file;
      continue;
    }
    const std::string key = "* Expected codes:";
    if (!in_entry || line.rfind(key, 0) != 0) continue;
    found = true;
    std::set<std::string> codes;
    std::istringstream words(line.substr(key.size()));
    std::string w;
    while (words >> w) {
      while (!w.empty() && (w.back() == ',' || w.back() == ';')) w.pop_back();
      const bool code =
          w.size() > 2 && w.find('_') != std::string::npos &&
          w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
      if (!code) break;
      codes.insert(w);
    }
    return codes;
  }
  return {};
}

struct Family {
  std::string folder;
  std::function<void(AnalyzeInputs&, const std::string&)> give;
  // Only codes starting so are compared, of any severity (the NCCL logs' labels are their
  // NCCL_* codes, info included); "": every code above info.
  std::string code_prefix;
};

const std::vector<Family>& families() {
  static const std::vector<Family> kAll{
      {"nccl-logs", [](AnalyzeInputs& in, const std::string& p) { in.nccl_logs.push_back(p); },
       "NCCL_"},
      {"nccl-tests", [](AnalyzeInputs& in, const std::string& p) { in.nccl_tests.push_back(p); },
       ""},
      {"ibtools", [](AnalyzeInputs& in, const std::string& p) { in.tool_outputs.push_back(p); },
       ""},
      {"ethtool", [](AnalyzeInputs& in, const std::string& p) { in.tool_outputs.push_back(p); },
       ""},
      {"iplink", [](AnalyzeInputs& in, const std::string& p) { in.tool_outputs.push_back(p); }, ""},
      {"perftest", [](AnalyzeInputs& in, const std::string& p) { in.tool_outputs.push_back(p); },
       ""},
      {"nvidia-smi-topo",
       [](AnalyzeInputs& in, const std::string& p) { in.tool_outputs.push_back(p); }, ""},
      {"dmesg", [](AnalyzeInputs& in, const std::string& p) { in.dmesg_file = p; }, ""},
  };
  return kAll;
}

// The codes of `text` analysed as one input of `family` (see Family::code_prefix).
std::set<std::string> judged(const Family& family, const std::string& text) {
  MemoryFilesystem files;
  files.addFile("/paste/input.txt", text);
  ibc::test::NoCommands runner;
  ibc::test::FixedClock clock;
  ibc::test::MapEnvironment env;
  HostSeams seams{files, files, runner, clock, env, nullptr, nullptr};
  auto open_root = [](const std::string&) { return std::make_unique<MemoryFilesystem>(); };
  AnalyzeInputs in;
  family.give(in, "/paste/input.txt");
  const auto out = analyzeInputs(in, core::RuleOptions{}, seams, open_root, "test");
  std::set<std::string> codes;
  for (const auto& n : out.nodes) {
    for (const auto& f : n.findings) {
      const bool counted = family.code_prefix.empty() ? f.severity() != "info"
                                                      : f.code().rfind(family.code_prefix, 0) == 0;
      if (counted) codes.insert(f.code());
    }
  }
  return codes;
}

TEST(PasteMetamorphic, EveryRealCaptureKeepsItsLabelledCodesThroughEveryManglingAndEveryPair) {
  const auto& all = transforms();
  std::size_t total = 0, kept = 0, not_yet = 0;
  std::map<std::pair<std::string, std::string>, std::size_t> misses;  // family × transform
  for (const auto& family : families()) {
    const std::string provenance =
        ibc::test::readFixture("real/" + family.folder + "/PROVENANCE.md");
    for (const auto& path : ibc::test::fixtureFiles("real/" + family.folder, ".txt")) {
      const std::string name = path.substr(path.rfind('/') + 1);
      bool labelled = false;
      const auto expected = expectedCodes(provenance, name, labelled);
      if (!labelled) {
        ADD_FAILURE() << family.folder << "/" << name << ": no \"* Expected codes:\" line";
        continue;
      }
      const std::string text = ibc::test::readFixture("real/" + family.folder + "/" + name);
      EXPECT_EQ(judged(family, text), expected) << family.folder << "/" << name << " as captured";
      auto check = [&](const std::string& variant, const std::string& mangled,
                       const std::vector<std::string>& names) {
        ++total;
        const auto got = judged(family, mangled);
        bool listed = false;
        for (const auto& n : names) listed = listed || notYet().count({family.folder, n}) != 0;
        if (got == expected) {
          ++kept;
          return;
        }
        if (listed) {
          ++not_yet;
          for (const auto& n : names) {
            if (notYet().count({family.folder, n}) != 0) ++misses[{family.folder, n}];
          }
          return;
        }
        ADD_FAILURE() << family.folder << "/" << name << " " << variant << ": got " << got.size()
                      << " code(s) {" <<
            [&] {
              std::string s;
              for (const auto& c : got) s += c + " ";
              return s;
            }() << "}, labelled "
                      << expected.size();
      };
      for (std::size_t i = 0; i < all.size(); ++i) {
        check(all[i].first, all[i].second(text), {all[i].first});
        for (std::size_t j = i + 1; j < all.size(); ++j) {
          check(all[i].first + "+" + all[j].first, all[j].second(all[i].second(text)),
                {all[i].first, all[j].first});
        }
      }
    }
  }
  std::cout << "[ paste metamorphic ] " << kept << " of " << total
            << " capture variants keep their labelled codes; " << not_yet
            << " lost in transformations not undone yet:\n";
  for (const auto& [key, n] : misses) {
    std::cout << "    " << key.first << " x " << key.second << ": " << n << " (" << notYet().at(key)
              << ")\n";
  }
  // A listed transformation that no longer loses anything leaves the list.
  for (const auto& [key, why] : notYet()) {
    EXPECT_NE(misses.count(key), 0u)
        << key.first << " x " << key.second << " keeps every label now: take it off kNotYet";
  }
}

}  // namespace
}  // namespace ibc::agent
