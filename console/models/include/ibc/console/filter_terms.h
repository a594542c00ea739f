#pragma once

// The filter language every page's filter box speaks (console/README.md, issue 22): space-separated
// terms, all of which must hold.
//   word                 a glob over the page's main column (a node name, a counter name)
//   key=value key!=value a column by its key: a glob over its words, case-insensitively
//   key<N key<=N key>N   numbers (key=N, key!=N too); a value with spaces in double quotes
//   severity>=warning    a verdict by rank (ok < info < warning < critical)
// A term that cannot be read is an error that names it, and the page shows nothing (a typo
// never silently shows every row).

#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace ibc::console {

struct FilterTerm {
  QString key;  // "" for a bare word
  QString op;   // = != < <= > >= ("=" for a bare word)
  QString value;
  std::optional<double> number;  // the value, when it is a number
  QRegularExpression glob;       // the value as a case-insensitive glob
};

struct FilterKeys {
  QStringList text;     // keys compared as words ("state", "code")
  QStringList numeric;  // keys compared as numbers ("rate", "total")
  // Any other lower-case key compared with a number is accepted (a counter by its name).
  bool any_numeric_key = false;
  // severity (or sev) compares by rank: ok 0, info 1, warning 2, critical 3
  // (severity>=warning); the term's number is the rank.
  bool severity = false;
};

struct ParsedFilter {
  std::vector<FilterTerm> terms;
  QString error;  // "" when every term could be read
};

ParsedFilter parseFilter(const QString& text, const FilterKeys& keys);

// Words split on spaces, except inside double quotes (worst="NODE OUTLIER").
QStringList splitFilterWords(const QString& text);
// The leading number of a cell ("200 Gb/s (4X HDR)" -> 200).
std::optional<double> leadingNumber(const QString& text);

// Whether `term` holds for a cell's text: the whole cell, a glob over it, or one of its words
// ("4: ACTIVE" is ACTIVE); "!=" negates.
bool termHoldsText(const FilterTerm& term, const QString& cell);
// Whether `term` holds for a number; a missing number holds only "!=".
bool termHoldsNumber(const FilterTerm& term, std::optional<double> value);

}  // namespace ibc::console
