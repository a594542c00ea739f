#include "ibc/console/filter_terms.h"

#include <QObject>

namespace ibc::console {

namespace {

bool compareNumbers(double v, const QString& op, double n) {
  if (op == QLatin1String("=")) return v == n;
  if (op == QLatin1String("!=")) return v != n;
  if (op == QLatin1String("<")) return v < n;
  if (op == QLatin1String("<=")) return v <= n;
  if (op == QLatin1String(">")) return v > n;
  return v >= n;
}

QString knownKeys(const FilterKeys& keys) {
  QStringList all = keys.text + keys.numeric;
  if (keys.severity) all << QStringLiteral("severity");
  if (keys.any_numeric_key) all << QObject::tr("a counter compared with a number");
  return all.join(QStringLiteral(", "));
}

}  // namespace

QStringList splitFilterWords(const QString& text) {
  QStringList out;
  QString word;
  bool quoted = false;
  for (const QChar c : text) {
    if (c == QLatin1Char('"')) quoted = !quoted;
    if (c == QLatin1Char(' ') && !quoted) {
      if (!word.isEmpty()) out << word;
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.isEmpty()) out << word;
  return out;
}

std::optional<double> leadingNumber(const QString& text) {
  static const QRegularExpression kLeading(QStringLiteral("^\\s*(-?\\d+(?:\\.\\d+)?)"));
  const auto m = kLeading.match(text);
  if (!m.hasMatch()) return std::nullopt;
  return m.captured(1).toDouble();
}

ParsedFilter parseFilter(const QString& text, const FilterKeys& keys) {
  static const QRegularExpression kTerm(
      QStringLiteral("^([A-Za-z][A-Za-z0-9_]*)(!=|<=|>=|=|<|>)(.*)$"));
  static const QRegularExpression kNumber(QStringLiteral("^-?\\d+(?:\\.\\d+)?$"));
  ParsedFilter out;
  auto globOf = [](const QString& v) {
    return QRegularExpression(QRegularExpression::wildcardToRegularExpression(v),
                              QRegularExpression::CaseInsensitiveOption);
  };
  for (const QString& word : splitFilterWords(text)) {
    const auto m = kTerm.match(word);
    if (!m.hasMatch()) {
      if (word.contains(QLatin1Char('=')) || word.contains(QLatin1Char('<')) ||
          word.contains(QLatin1Char('>'))) {
        out.error = QObject::tr("cannot read \"%1\": use key=value, key!=value or key<N (keys: %2)")
                        .arg(word, knownKeys(keys));
        continue;
      }
      out.terms.push_back({{}, QStringLiteral("="), word, std::nullopt, globOf(word)});
      continue;
    }
    FilterTerm t;
    t.key = m.captured(1).toLower();
    t.op = m.captured(2);
    t.value = m.captured(3);
    if (t.value.size() >= 2 && t.value.startsWith(QLatin1Char('"')) &&
        t.value.endsWith(QLatin1Char('"')))
      t.value = t.value.mid(1, t.value.size() - 2);
    if (kNumber.match(t.value).hasMatch()) t.number = t.value.toDouble();
    t.glob = globOf(t.value);
    if (keys.severity && (t.key == QLatin1String("severity") || t.key == QLatin1String("sev"))) {
      static const QStringList kRanks = {QStringLiteral("ok"), QStringLiteral("info"),
                                         QStringLiteral("warning"), QStringLiteral("critical")};
      const auto rank = kRanks.indexOf(t.value.toLower());
      if (rank < 0) {
        out.error = QObject::tr("cannot read \"%1\": a severity is ok, info, warning or critical")
                        .arg(word);
        continue;
      }
      t.key = QStringLiteral("severity");
      t.number = static_cast<double>(rank);
      out.terms.push_back(std::move(t));
      continue;
    }
    const bool ordered = t.op != QLatin1String("=") && t.op != QLatin1String("!=");
    const bool numeric_key =
        keys.numeric.contains(t.key) || (keys.any_numeric_key && !keys.text.contains(t.key) &&
                                         m.captured(1) == t.key && t.number.has_value());
    if (numeric_key) {
      if (!t.number && !(t.value.isEmpty() && !ordered)) {
        out.error = QObject::tr("cannot read \"%1\": %2 is a number (%2>=%3)")
                        .arg(word, t.key, QStringLiteral("1"));
        continue;
      }
    } else if (keys.text.contains(t.key)) {
      if (ordered) {
        out.error = QObject::tr(
                        "cannot read \"%1\": %2 compares numbers only with < <= > >= "
                        "(use = or != for words)")
                        .arg(word, t.key);
        continue;
      }
      t.number.reset();  // words compare as words, even "fw=20"
    } else {
      out.error = QObject::tr("cannot read \"%1\": %2 is no column here (keys: %3)")
                      .arg(word, m.captured(1), knownKeys(keys));
      continue;
    }
    out.terms.push_back(std::move(t));
  }
  return out;
}

bool termHoldsText(const FilterTerm& term, const QString& cell) {
  const bool negate = term.op == QLatin1String("!=");
  bool match = term.value.isEmpty() ? cell.trimmed().isEmpty()
                                    : cell.compare(term.value, Qt::CaseInsensitive) == 0 ||
                                          term.glob.match(cell).hasMatch();
  if (!match && !term.value.isEmpty()) {
    static const QRegularExpression kWordBreak(QStringLiteral("[^A-Za-z0-9_.]+"));
    for (const QString& w : cell.split(kWordBreak, Qt::SkipEmptyParts)) {
      if (w.compare(term.value, Qt::CaseInsensitive) == 0) {
        match = true;
        break;
      }
    }
  }
  return negate ? !match : match;
}

bool termHoldsNumber(const FilterTerm& term, std::optional<double> value) {
  if (!value || !term.number) return term.op == QLatin1String("!=");
  return compareNumbers(*value, term.op, *term.number);
}

}  // namespace ibc::console
