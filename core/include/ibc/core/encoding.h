#pragma once

// Byte encodings shared by snapshot ids, JSON bytes fields and the job-step channel.

#include <string>
#include <string_view>

#include "ibc/core/result.h"

namespace ibc::core {

// Standard base64 (RFC 4648, with '=' padding).
std::string base64Encode(std::string_view bytes);
// Errors: Malformed (length not a multiple of 4, characters outside the alphabet,
// misplaced padding).
Result<std::string> base64Decode(std::string_view text);
// Lower-case hex SHA-256.
std::string sha256Hex(std::string_view bytes);

}  // namespace ibc::core
