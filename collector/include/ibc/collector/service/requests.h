#pragma once

// The collector's request kinds, one row each (issue 25): the kind (the CollectorRequest
// oneof case), the name log lines and messages use, the certificate roles allowed to send
// it, and its handler. Service::handle() refuses a role not allowed before any handler
// runs, so authorization (docs/security.md) is read from this table and nowhere else. A new
// request type is the proto field and one row with its handler, in the file of its area
// (queries.cpp: reads; cases.cpp: cases): handlers are free functions that reach the
// service through RequestContext, so Service's declaration does not change.

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

struct RequestCall;

// What a handler may use of the service. Cheap to copy (one reference).
class RequestContext {
 public:
  using Response = ::ibcollect::v1::CollectorResponse;

  explicit RequestContext(Service& service) : service_(service) {}
  Store& store() const;
  const ServiceOptions& options() const;
  std::chrono::system_clock::time_point now() const;  // the service's clock
  EventLog& log() const;
  ::ibcollect::v1::CollectorStats stats() const;
  // A request's page size: ServiceOptions' default for 0, capped at its maximum.
  std::size_t listLimit(uint32_t asked) const;
  // The rejection of `call`, counted and logged (request_rejected, request=NAME).
  Response reject(const RequestCall& call, ::ibcollect::v1::RejectReason reason,
                  std::string message) const;
  // reject() with rejectReasonFor(error).
  Response failed(const RequestCall& call, const core::Error& error) const;
  // The upload path (verification, then the group-commit writer, which replies).
  void upload(RequestCall& call) const;

 private:
  Service& service_;
};

// One request on its way through its handler.
struct RequestCall {
  RequestContext service;
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
  void (*handle)(RequestCall& call);
};

// Every row; the kind appears once.
std::span<const RequestKind> requestKinds();
// The rows of each area, which requestKinds() joins: reads (queries.cpp) and cases
// (cases.cpp).
std::span<const RequestKind> queryRequestKinds();
std::span<const RequestKind> caseRequestKinds();

// An answer to `call` (its request_id set), for the handler to fill.
inline RequestContext::Response answerTo(const RequestCall& call) {
  RequestContext::Response r;
  r.set_request_id(call.request.request_id());
  return r;
}

// The handler adapter of a request answered before its handler returns.
template <RequestContext::Response (*handler)(const RequestCall&)>
void answer(RequestCall& call) {
  call.reply(handler(call));
}

// The refusals of the rows: who may send a request of that kind.
std::string onlyAgentsUpload(core::CertificateRole role);
std::string onlySupportReads(core::CertificateRole role);
inline constexpr RoleSet kAgentRoles{core::CertificateRole::Agent};
inline constexpr RoleSet kSupportRoles{core::CertificateRole::Support};
// The row of `kind`, or nullptr (KIND_NOT_SET).
const RequestKind* findRequestKind(::ibcollect::v1::CollectorRequest::KindCase kind);

}  // namespace ibc::collector
