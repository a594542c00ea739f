#pragma once

// Protobuf messages as JSON following protobuf's proto3 JSON mapping with the options
// ibcollect uses everywhere: proto field names (snake_case), every field printed (zeros,
// empty strings, empty lists; unset sub-messages and proto3 `optional` fields omitted), 64-bit
// integers as strings, enums by name, bytes as base64. The document is streamed from protobuf
// reflection by a small writer in json.cpp (no document tree in memory); the output equals what
// google::protobuf::util::MessageToJsonString prints with always_print_primitive_fields
// and preserve_proto_field_names (checked by tests/unit/core/json_test.cpp), without its
// per-process type-resolver set-up, which dominated a one-shot `ibcollect` run.

#include <string>

#include <google/protobuf/message.h>

namespace ibc::core {

// indent < 0: compact one-line output.
std::string messageToJson(const google::protobuf::Message& message, int indent = 2);

}  // namespace ibc::core
