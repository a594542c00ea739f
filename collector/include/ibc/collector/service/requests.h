#pragma once

// The collector's request kinds, one row each (issue 25): the kind (the CollectorRequest
// oneof case), the name log lines and messages use, the certificate roles allowed to send
// it, and its handler. Service::handle() refuses a role not allowed before any handler
// runs, so authorization (DESIGN §6) is read from this table and nowhere else. A new
// request type is the proto field, one row in requests.cpp and its handler.

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "ibc/collector/service/service.h"

namespace ibc::collector {

// The certificate roles a request kind accepts.
class RoleSet {
 public:
  constexpr RoleSet(std::initializer_list<core::CertificateRole> roles) {
    for (auto r : roles) bits_ |= bit(r);
  }
  constexpr bool contains(core::CertificateRole role) const { return (bits_ & bit(role)) != 0; }

 private:
  static constexpr unsigned bit(core::CertificateRole r) { return 1u << static_cast<unsigned>(r); }
  unsigned bits_ = 0;
};

// One request on its way through its handler.
struct RequestCall {
  const Peer& peer;
  ::ibcollect::v1::CollectorRequest& request;
  const Service::Reply& reply;
  std::string_view name;  // the row's name: what rejections log as request=NAME
  std::chrono::steady_clock::time_point received;
};

struct RequestKind {
  ::ibcollect::v1::CollectorRequest::KindCase kind;
  std::string_view name;  // the oneof field's name
  RoleSet allowed;
  // The FORBIDDEN message for a certificate of `role` (not in `allowed`).
  std::string (*refusal)(core::CertificateRole role);
  // Calls call.reply exactly once (an upload: once the write is durable or failed).
  void (*handle)(Service& service, RequestCall& call);
};

// Every row; the kind appears once.
std::span<const RequestKind> requestKinds();
// The row of `kind`, or nullptr (KIND_NOT_SET).
const RequestKind* findRequestKind(::ibcollect::v1::CollectorRequest::KindCase kind);

}  // namespace ibc::collector
