#pragma once

// Untrusted text inside protobuf messages. proto3 `string` fields must hold valid UTF-8: a
// message holding anything else serialises with a logged error and then fails to parse,
// so one odd byte in a sysfs file or a paste would make a signed snapshot unreadable.
// Parsers keep their text printable; this is the net under all of them.

#include <cstddef>

#include <google/protobuf/message.h>

namespace ibc::core {

// Rewrites, in `message` and every message inside it, each `string` field (not `bytes`)
// that is not valid UTF-8 or holds control characters other than newline and tab, with
// sanitizeUtf8() (text.h). Returns how many field values were rewritten; 0 leaves the
// message untouched.
std::size_t sanitizeStringFields(google::protobuf::Message& message);

}  // namespace ibc::core
