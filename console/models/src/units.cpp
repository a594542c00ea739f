#include "ibc/console/units.h"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace ibc::console {

namespace {

// "1234567" -> "1,234,567"; keeps a leading minus.
std::string groupThousands(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", value);
  std::string digits = buf;
  std::string sign;
  if (!digits.empty() && digits[0] == '-') {
    sign = "-";
    digits.erase(0, 1);
  }
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return sign + out;
}

// Three significant digits for a scaled number: "1.50", "12.5", "512".
std::string threeDigits(double value) {
  char buf[64];
  const double a = std::fabs(value);
  std::snprintf(buf, sizeof buf, a < 10 ? "%.2f" : a < 100 ? "%.1f" : "%.0f", value);
  return buf;
}

constexpr const char* kBinaryPrefixes[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};

}  // namespace

UnitScale unitScale(CounterUnit unit, double largest) {
  switch (unit) {
    case CounterUnit::Packets: return {1, "packets"};
    case CounterUnit::Count: return {1, ""};
    case CounterUnit::Bytes: break;
  }
  double divisor = 1;
  std::size_t k = 0;
  while (std::fabs(largest) >= divisor * 1024 && k + 1 < std::size(kBinaryPrefixes)) {
    divisor *= 1024;
    ++k;
  }
  return {divisor, kBinaryPrefixes[k]};
}

std::string formatAmount(double value, CounterUnit unit) {
  switch (unit) {
    case CounterUnit::Packets: return groupThousands(value) + " packets";
    case CounterUnit::Count: return groupThousands(value);
    case CounterUnit::Bytes: break;
  }
  const UnitScale s = unitScale(unit, value);
  if (s.divisor == 1) return groupThousands(value) + " bytes";
  return threeDigits(value / s.divisor) + " " + s.suffix;
}

std::string formatCounter(std::string_view name, double count) {
  return formatAmount(count * counterScale(name), counterUnit(name));
}

std::string formatCounterRate(std::string_view name, double count_per_second) {
  const double v = count_per_second * counterScale(name);
  const CounterUnit unit = counterUnit(name);
  if (unit == CounterUnit::Bytes) {
    const UnitScale s = unitScale(unit, v);
    char buf[64];
    const double scaled = v / s.divisor;
    std::snprintf(buf, sizeof buf, std::fabs(scaled) < 10 ? "%.2f" : "%.1f", scaled);
    return std::string(buf) + " " + s.suffix + "/s";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) < 10 ? "%.1f" : "%.0f", v);
  return std::string(buf) + (unit == CounterUnit::Packets ? " packets/s" : "/s");
}

}  // namespace ibc::console
