#include "ibc/core/proto_text.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <string>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

bool needsSanitizing(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f) {
      // Slow path only for text that is not plain printable ASCII.
      return sanitizeUtf8(s) != s;
    }
  }
  return false;
}

}  // namespace

std::size_t sanitizeStringFields(Message& message) {
  // Walks the descriptor rather than ListFields(), which allocates a vector per message:
  // a snapshot holds thousands of small counter messages.
  std::size_t rewritten = 0;
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  std::string scratch;
  for (int k = 0; k < descriptor->field_count(); ++k) {
    const FieldDescriptor* f = descriptor->field(k);
    const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (!is_message && f->type() != FieldDescriptor::TYPE_STRING) continue;
    if (f->is_repeated()) {
      const int n = reflection->FieldSize(message, f);
      for (int i = 0; i < n; ++i) {
        if (is_message) {
          rewritten += sanitizeStringFields(*reflection->MutableRepeatedMessage(&message, f, i));
          continue;
        }
        const std::string& v = reflection->GetRepeatedStringReference(message, f, i, &scratch);
        if (needsSanitizing(v)) {
          reflection->SetRepeatedString(&message, f, i, sanitizeUtf8(v));
          ++rewritten;
        }
      }
    } else if (is_message) {
      if (reflection->HasField(message, f))
        rewritten += sanitizeStringFields(*reflection->MutableMessage(&message, f));
    } else {
      const std::string& v = reflection->GetStringReference(message, f, &scratch);
      if (needsSanitizing(v)) {
        reflection->SetString(&message, f, sanitizeUtf8(v));
        ++rewritten;
      }
    }
  }
  return rewritten;
}

}  // namespace ibc::core
