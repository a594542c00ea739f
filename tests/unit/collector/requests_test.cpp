#include "ibc/collector/service/requests.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using core::CertificateRole;
using core::Error;
using core::ErrorCode;

const google::protobuf::OneofDescriptor& kindOneof() {
  return *v1::CollectorRequest::descriptor()->FindOneofByName("kind");
}

TEST(RequestKinds, EveryOneofCaseHasOneRowNamedAfterItsField) {
  const auto& kinds = kindOneof();
  ASSERT_GT(kinds.field_count(), 0);
  std::set<int> rows;
  for (const auto& row : requestKinds()) {
    EXPECT_TRUE(rows.insert(static_cast<int>(row.kind)).second) << row.name << " twice";
    EXPECT_NE(row.handle, nullptr) << row.name;
    EXPECT_NE(row.refusal, nullptr) << row.name;
  }
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(kinds.field_count()));
  for (int i = 0; i < kinds.field_count(); ++i) {
    const auto* field = kinds.field(i);
    const auto* row = findRequestKind(static_cast<v1::CollectorRequest::KindCase>(field->number()));
    ASSERT_NE(row, nullptr) << field->name() << " has no row";
    // The log name is the field's name: request=list_jobs in a log line is the proto field.
    EXPECT_EQ(row->name, field->name());
  }
  EXPECT_EQ(findRequestKind(v1::CollectorRequest::KIND_NOT_SET), nullptr);
}

// docs/security.md: only agents write (their own tenant's snapshots), only support engineers read
// and work on cases; providers and anything else do neither.
TEST(RequestKinds, OnlyAgentsUploadAndOnlySupportReads) {
  for (const auto& row : requestKinds()) {
    const bool upload = row.kind == v1::CollectorRequest::kUpload;
    EXPECT_EQ(row.allowed.contains(CertificateRole::Agent), upload) << row.name;
    EXPECT_EQ(row.allowed.contains(CertificateRole::Support), !upload) << row.name;
    EXPECT_FALSE(row.allowed.contains(CertificateRole::Provider)) << row.name;
    EXPECT_FALSE(row.allowed.contains(CertificateRole::Collector)) << row.name;
    EXPECT_FALSE(row.allowed.contains(CertificateRole::Other)) << row.name;
  }
}

TEST(RequestKinds, RefusalsSayWhoMaySendTheRequest) {
  EXPECT_EQ(findRequestKind(v1::CollectorRequest::kUpload)->refusal(CertificateRole::Support),
            "only agent certificates upload snapshots; this is a support certificate");
  EXPECT_EQ(findRequestKind(v1::CollectorRequest::kFetchCase)->refusal(CertificateRole::Agent),
            "only support certificates read and work on cases; agent certificates read nothing");
}

TEST(RejectReasonFor, TheRequestsFaultIsMalformedAbsenceNotFoundTheRestStorage) {
  const auto reason = [](ErrorCode code) { return rejectReasonFor(Error{code, "x"}); };
  EXPECT_EQ(reason(ErrorCode::InvalidArgument), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_EQ(reason(ErrorCode::TooLarge), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_EQ(reason(ErrorCode::NotFound), v1::REJECT_REASON_NOT_FOUND);
  // The store's own failures (and a record it cannot parse) are the collector's problem.
  for (auto code : {ErrorCode::Io, ErrorCode::Unavailable, ErrorCode::Unsupported,
                    ErrorCode::PermissionDenied, ErrorCode::Timeout, ErrorCode::Malformed}) {
    EXPECT_EQ(reason(code), v1::REJECT_REASON_STORAGE_FAILURE) << core::errorCodeName(code);
  }
}

}  // namespace
}  // namespace ibc::collector
