#include "ibc/core/json.h"

#include "ibc/core/encoding.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace ibc::core {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::ordered_json;

Json doubleValue(double v) {
  // The JSON mapping writes non-finite numbers as strings.
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

Json messageValue(const Message& m);

Json scalar(const Message& m, const Reflection* r, const FieldDescriptor* f, int index) {
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return doubleValue(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return doubleValue(
          static_cast<double>(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f)));
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int v = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      if (const auto* ev = f->enum_type()->FindValueByNumber(v)) return ev->name();
      return v;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                 : r->GetStringReference(m, f, &scratch);
      if (f->type() == FieldDescriptor::TYPE_BYTES) return base64Encode(s);
      return s;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return messageValue(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
  }
  return nullptr;
}

Json messageValue(const Message& m) {
  Json obj = Json::object();
  const auto* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      Json arr = Json::array();
      const int n = r->FieldSize(m, f);
      for (int k = 0; k < n; ++k) arr.push_back(scalar(m, r, f, k));
      obj[f->name()] = std::move(arr);
      continue;
    }
    // Fields with presence (sub-messages, proto3 `optional`) print only when set.
    if (f->has_presence() && !r->HasField(m, f)) continue;
    obj[f->name()] = scalar(m, r, f, -1);
  }
  return obj;
}

}  // namespace

std::string messageToJson(const Message& message, int indent) {
  // Invalid UTF-8 never reaches here (inputs are sanitised on the way in); replace rather
  // than throw if it ever does.
  return messageValue(message).dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ibc::core
