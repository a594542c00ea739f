#include "ibc/collector/event_log.h"

#include <cstdio>
#include <ctime>

namespace ibc::collector {

std::string_view logLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "info";
}

void appendLogValue(std::string& out, std::string_view value) {
  bool bare = !value.empty();
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '"' || c == '=' || c == '\\') {
      bare = false;
      break;
    }
  }
  if (bare) {
    out.append(value);
    return;
  }
  out.push_back('"');
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", u);
          out += hex;
        } else {
          // UTF-8 passes through: names may be non-ASCII and stay readable.
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string formatEvent(LogLevel level, std::string_view event, const LogFields& fields) {
  std::string out = "level=";
  out += logLevelName(level);
  out += " event=";
  appendLogValue(out, event);
  for (const auto& f : fields) {
    out.push_back(' ');
    out += f.key;
    out.push_back('=');
    appendLogValue(out, f.value);
  }
  return out;
}

namespace {

std::string timeStamp(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[40];
  const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(stamp + n, sizeof stamp - n, ".%03dZ", static_cast<int>(ms.count()));
  return stamp;
}

}  // namespace

StreamEventLog::StreamEventLog(std::ostream& out, StreamEventLogOptions options)
    : out_(out), options_(std::move(options)) {
  if (!options_.steady_now) options_.steady_now = [] { return std::chrono::steady_clock::now(); };
  if (!options_.wall_now) options_.wall_now = [] { return std::chrono::system_clock::now(); };
}

StreamEventLog::~StreamEventLog() { flushSuppressed(); }

void StreamEventLog::writeLine(const std::string& line) {
  out_ << "ts=" << timeStamp(options_.wall_now()) << ' ' << line << '\n';
  out_.flush();
}

// Reports the kinds whose second has ended (all of them at exit) and forgets them.
void StreamEventLog::reportEnded(std::chrono::steady_clock::time_point now, bool all) {
  for (auto it = windows_.begin(); it != windows_.end();) {
    if (!all && now - it->second.start < std::chrono::seconds(1)) {
      ++it;
      continue;
    }
    if (it->second.suppressed > 0) {
      writeLine(
          formatEvent(LogLevel::Warn, "log_suppressed",
                      {{"kind", it->first}, {"count", std::to_string(it->second.suppressed)}}));
    }
    it = windows_.erase(it);
  }
}

void StreamEventLog::event(LogLevel level, std::string_view event, const LogFields& fields) {
  std::string kind(event);
  for (const auto& f : fields) {
    if (f.key == "reason") kind += "/" + f.value;
  }
  const std::string line = formatEvent(level, event, fields);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = options_.steady_now();
  reportEnded(now, false);
  if (options_.lines_per_second > 0) {
    auto [it, fresh] = windows_.try_emplace(kind, Window{now, 0, 0});
    if (it->second.written >= options_.lines_per_second) {
      ++it->second.suppressed;
      return;
    }
    ++it->second.written;
  }
  writeLine(line);
}

void StreamEventLog::flushSuppressed() {
  std::lock_guard<std::mutex> lock(mutex_);
  reportEnded(options_.steady_now(), true);
}

}  // namespace ibc::collector
