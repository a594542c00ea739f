// The request table (requests.h): one row per CollectorRequest kind.

#include "ibc/collector/service/requests.h"

#include <algorithm>
#include <array>

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;
using core::CertificateRole;
using Kind = v1::CollectorRequest;

namespace {

std::string onlyAgentsUpload(CertificateRole role) {
  return "only agent certificates upload snapshots; this is a " +
         std::string(core::certificateRoleName(role)) + " certificate";
}

std::string onlySupportReads(CertificateRole role) {
  return "only support certificates read and work on cases; " +
         std::string(core::certificateRoleName(role)) + " certificates read nothing";
}

constexpr RoleSet kAgents{CertificateRole::Agent};
constexpr RoleSet kSupport{CertificateRole::Support};

// Every handler but upload answers before it returns: this adapter replies with what it
// returns. Upload replies itself, later (once the write is durable).
template <auto handler>
void answer(Service& service, RequestCall& call) {
  call.reply((service.*handler)(call));
}

template <auto handler>
void answerLater(Service& service, RequestCall& call) {
  (service.*handler)(call);
}

}  // namespace

// A friend of Service: its handlers are private, named here and nowhere else.
std::span<const RequestKind> requestKinds() {
  static const std::array<RequestKind, 10> kRows{{
      {Kind::kUpload, "upload", kAgents, onlyAgentsUpload, answerLater<&Service::upload>},
      {Kind::kListJobs, "list_jobs", kSupport, onlySupportReads, answer<&Service::listJobs>},
      {Kind::kListNodes, "list_nodes", kSupport, onlySupportReads, answer<&Service::listNodes>},
      {Kind::kListSnapshots, "list_snapshots", kSupport, onlySupportReads,
       answer<&Service::listSnapshots>},
      {Kind::kFetch, "fetch", kSupport, onlySupportReads, answer<&Service::fetchSnapshot>},
      {Kind::kStats, "stats", kSupport, onlySupportReads, answer<&Service::statsRequest>},
      {Kind::kCreateCase, "create_case", kSupport, onlySupportReads, answer<&Service::createCase>},
      {Kind::kUpdateCase, "update_case", kSupport, onlySupportReads, answer<&Service::updateCase>},
      {Kind::kListCases, "list_cases", kSupport, onlySupportReads, answer<&Service::listCases>},
      {Kind::kFetchCase, "fetch_case", kSupport, onlySupportReads, answer<&Service::fetchCase>},
  }};
  return kRows;
}

const RequestKind* findRequestKind(v1::CollectorRequest::KindCase kind) {
  const auto rows = requestKinds();
  const auto row = std::find_if(rows.begin(), rows.end(),
                                [kind](const RequestKind& r) { return r.kind == kind; });
  return row != rows.end() ? &*row : nullptr;
}

}  // namespace ibc::collector
