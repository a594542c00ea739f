#pragma once

// Shared plumbing of bundle.cpp (building, attaching) and bundle_verify.cpp (checking). Not a
// public header.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ibc/core/signing.h"

namespace ibc::core::bundle_detail {

// "CN=... (role support)", or "an unreadable certificate (role ...)".
std::string whoIs(const CertificateIdentity& id);

// "attachments/007.json" → 7 and whether it is the record (else the signature); 0 when the
// name is not one (non-canonical numbers such as "7" or "0007" are not).
std::pair<uint32_t, bool> attachmentNumber(std::string_view name);

}  // namespace ibc::core::bundle_detail
