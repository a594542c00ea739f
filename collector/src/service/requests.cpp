// The request table (requests.h): the upload row here, the rows of each area beside their
// handlers (queries.cpp, cases.cpp).

#include "ibc/collector/service/requests.h"

#include <algorithm>
#include <vector>

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;
using core::CertificateRole;

std::string onlyAgentsUpload(CertificateRole role) {
  return "only agent certificates upload snapshots; this is a " +
         std::string(core::certificateRoleName(role)) + " certificate";
}

std::string onlySupportReads(CertificateRole role) {
  return "only support certificates read and work on cases; " +
         std::string(core::certificateRoleName(role)) + " certificates read nothing";
}

namespace {

// Upload replies itself, later: once the write is durable (or failed).
void uploadHandler(RequestCall& call) { call.service.upload(call); }

std::vector<RequestKind> joinedRows() {
  std::vector<RequestKind> rows{
      {v1::CollectorRequest::kUpload, "upload", kAgentRoles, onlyAgentsUpload, uploadHandler}};
  for (auto area : {queryRequestKinds(), caseRequestKinds()}) {
    rows.insert(rows.end(), area.begin(), area.end());
  }
  return rows;
}

}  // namespace

std::span<const RequestKind> requestKinds() {
  static const std::vector<RequestKind> kRows = joinedRows();
  return kRows;
}

const RequestKind* findRequestKind(v1::CollectorRequest::KindCase kind) {
  const auto rows = requestKinds();
  const auto row = std::find_if(rows.begin(), rows.end(),
                                [kind](const RequestKind& r) { return r.kind == kind; });
  return row != rows.end() ? &*row : nullptr;
}

}  // namespace ibc::collector
