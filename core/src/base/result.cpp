#include "ibc/core/result.h"

namespace ibc::core {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::NotFound: return "ENOENT";
    case ErrorCode::PermissionDenied: return "EACCES";
    case ErrorCode::InvalidArgument: return "EINVAL";
    case ErrorCode::Malformed: return "malformed";
    case ErrorCode::TooLarge: return "too large";
    case ErrorCode::Io: return "EIO";
    case ErrorCode::Timeout: return "timeout";
    case ErrorCode::Unavailable: return "unavailable";
    case ErrorCode::Unsupported: return "unsupported";
  }
  return "error";
}

}  // namespace ibc::core
