#pragma once

// Errors as values (CONTRIBUTING.md, habit 3). Expected failures — a missing attribute, EACCES, a
// malformed line, a corrupt file — travel as `Error` inside `Result<T>` and end up in the
// report; asserts are for programming bugs only.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ibc::core {

enum class ErrorCode {
  NotFound,          // ENOENT: file, device or attribute absent (e.g. old kernel)
  PermissionDenied,  // EACCES / EPERM
  InvalidArgument,   // EINVAL from a read, or a bad option value
  Malformed,         // input text or bytes that do not parse
  TooLarge,          // input beyond the bound we accept
  Io,                // any other I/O error
  Timeout,           // a command or read ran past its deadline
  Unavailable,       // the data source exists but cannot answer (tool not installed, ...)
  Unsupported,       // a format or version we do not understand
};

// Short stable name of a code ("ENOENT"-like where one exists), used in reports.
std::string_view errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

  T valueOr(T fallback) const& { return ok() ? std::get<0>(v_) : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_{ErrorCode::Io, {}};
  bool ok_ = true;
};

}  // namespace ibc::core
