#include "ibc/core/protocol.h"

#include <algorithm>
#include <cctype>

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

std::string CollectorEndpoint::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<CollectorEndpoint> parseCollectorEndpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  const auto bad = [&] {
    return Error{ErrorCode::InvalidArgument,
                 "collector address must be HOST:PORT, got '" + std::string(text) + "'"};
  };
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return bad();
  CollectorEndpoint e;
  e.host = std::string(text.substr(0, colon));
  if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']') {
    e.host = e.host.substr(1, e.host.size() - 2);
  }
  unsigned long port = 0;
  for (char c : text.substr(colon + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad();
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (port > 65535) return bad();
  }
  if (port == 0 || e.host.empty()) return bad();
  e.port = static_cast<uint16_t>(port);
  return e;
}

std::string rejectReasonName(v1::RejectReason reason) {
  std::string name = v1::RejectReason_Name(reason);
  if (name.empty()) return "reason_" + std::to_string(static_cast<int>(reason));
  constexpr std::string_view kPrefix = "REJECT_REASON_";
  if (name.rfind(kPrefix, 0) == 0) name.erase(0, kPrefix.size());
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

bool isRetryable(v1::RejectReason reason) {
  return reason == v1::REJECT_REASON_OVERLOADED || reason == v1::REJECT_REASON_SHUTTING_DOWN ||
         reason == v1::REJECT_REASON_STORAGE_FAILURE;
}

std::string describeRejection(const v1::Rejection& rejection) {
  return rejectReasonName(rejection.reason()) + ": " + rejection.message();
}

}  // namespace ibc::core
