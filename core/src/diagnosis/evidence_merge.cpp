#include "ibc/core/evidence_merge.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/message_differencer.h>

#include <cctype>
#include <cstdio>

#include "ibc/core/text.h"

namespace ibc::core {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::util::MessageDifferencer;

bool isAtomic(const Descriptor* d) {
  return d->full_name() == "ibcollect.v1.EnumValue" || d->full_name() == "ibcollect.v1.Counter";
}

// A message as people read it: an EnumValue by its raw text, a Counter by its value.
std::string show(const Message& m) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  if (d->full_name() == "ibcollect.v1.EnumValue") {
    const std::string raw = r->GetString(m, d->FindFieldByName("raw"));
    if (!raw.empty()) return raw;
    return r->GetString(m, d->FindFieldByName("name"));
  }
  if (d->full_name() == "ibcollect.v1.Counter") {
    const std::string why = r->GetString(m, d->FindFieldByName("unavailable_reason"));
    if (!why.empty()) return "unavailable (" + why + ")";
    return std::to_string(r->GetUInt64(m, d->FindFieldByName("value")));
  }
  return m.ShortDebugString();
}

std::string showField(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return std::to_string(r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64: return std::to_string(r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32: return std::to_string(r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64: return std::to_string(r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", r->GetDouble(m, f));
      return buf;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", static_cast<double>(r->GetFloat(m, f)));
      return buf;
    }
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(m, f) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM: return r->GetEnum(m, f)->name();
    case FieldDescriptor::CPPTYPE_STRING: return r->GetString(m, f);
    case FieldDescriptor::CPPTYPE_MESSAGE: return show(r->GetMessage(m, f));
  }
  return "?";
}

// Two readings of one value that mean the same: a state is the same state when its code is
// ("4: ACTIVE" from sysfs and "Active" from ibstat), whatever the spelling.
bool sameValue(const Message& a, const Message& b) {
  const Descriptor* d = a.GetDescriptor();
  if (d->full_name() == "ibcollect.v1.EnumValue") {
    const FieldDescriptor* code = d->FindFieldByName("code");
    const int32_t x = a.GetReflection()->GetInt32(a, code);
    const int32_t y = b.GetReflection()->GetInt32(b, code);
    if (x > 0 && y > 0) return x == y;  // -1: a pasted name without a code
    const auto norm = [](const Message& m) {
      std::string s = show(m);
      if (const auto colon = s.find(": "); colon != std::string::npos) s = s.substr(colon + 2);
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    return norm(a) == norm(b);
  }
  return MessageDifferencer::Equals(a, b);
}

// The key that says two entries of a repeated message are the same thing.
std::string keyOf(const Message& m) {
  const Descriptor* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  if (const FieldDescriptor* name = d->FindFieldByName("name");
      name != nullptr && name->cpp_type() == FieldDescriptor::CPPTYPE_STRING &&
      !name->is_repeated()) {
    return r->GetString(m, name);
  }
  if (const FieldDescriptor* port = d->FindFieldByName("port");
      port != nullptr && port->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 &&
      !port->is_repeated()) {
    return std::to_string(r->GetUInt32(m, port));
  }
  return {};
}

// Two netdevs of one name bound to different RDMA devices are different interfaces
// (pasted from different hosts, or renamed): never one.
bool sameEntry(const Message& a, const Message& b) {
  if (keyOf(a) != keyOf(b)) return false;
  const Descriptor* d = a.GetDescriptor();
  if (const FieldDescriptor* rdma = d->FindFieldByName("rdma_device"); rdma != nullptr) {
    const std::string x = a.GetReflection()->GetString(a, rdma);
    const std::string y = b.GetReflection()->GetString(b, rdma);
    if (!x.empty() && !y.empty() && x != y) return false;
  }
  return true;
}

void merge(Message& into, const Message& from, const std::string& path,
           std::vector<EvidenceConflict>& conflicts);

// Entries of a repeated message: a new one is added; one with a key that `into` has already
// is merged into it (its value compared, for an atomic one); a keyless duplicate is dropped.
void mergeRepeatedMessages(Message& into, const Message& from, const FieldDescriptor* f,
                           const std::string& here, std::vector<EvidenceConflict>& conflicts) {
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  const int n = rf->FieldSize(from, f);
  for (int k = 0; k < n; ++k) {
    const Message& item = rf->GetRepeatedMessage(from, f, k);
    const std::string key = keyOf(item);
    Message* match = nullptr;
    for (int j = 0; j < ri->FieldSize(into, f) && match == nullptr; ++j) {
      Message* candidate = ri->MutableRepeatedMessage(&into, f, j);
      if (key.empty() ? MessageDifferencer::Equals(*candidate, item)
                      : sameEntry(*candidate, item)) {
        match = candidate;
      }
    }
    if (match == nullptr) {
      ri->AddMessage(&into, f)->CopyFrom(item);
    } else if (!key.empty()) {
      const std::string at = here + "[" + key + "]";
      if (isAtomic(item.GetDescriptor())) {
        if (!sameValue(*match, item)) conflicts.push_back({at, show(*match), show(item)});
      } else {
        merge(*match, item, at, conflicts);
      }
    }
  }
}

// Whether `into`'s repeated scalar field has from's k-th value; other repeated scalars than
// strings and unsigned integers are not evidence here and count as present.
bool hasRepeatedValue(const Message& into, const Message& from, const FieldDescriptor* f, int k) {
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  for (int j = 0; j < ri->FieldSize(into, f); ++j) {
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        if (ri->GetRepeatedString(into, f, j) == rf->GetRepeatedString(from, f, k)) return true;
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        if (ri->GetRepeatedUInt32(into, f, j) == rf->GetRepeatedUInt32(from, f, k)) return true;
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        if (ri->GetRepeatedUInt64(into, f, j) == rf->GetRepeatedUInt64(from, f, k)) return true;
        break;
      default: return true;
    }
  }
  return false;
}

// A repeated scalar is a set: from's values that `into` lacks are appended.
void mergeRepeatedScalars(Message& into, const Message& from, const FieldDescriptor* f) {
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  const int n = rf->FieldSize(from, f);
  for (int k = 0; k < n; ++k) {
    if (hasRepeatedValue(into, from, f, k)) continue;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        ri->AddString(&into, f, rf->GetRepeatedString(from, f, k));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        ri->AddUInt32(&into, f, rf->GetRepeatedUInt32(from, f, k));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        ri->AddUInt64(&into, f, rf->GetRepeatedUInt64(from, f, k));
        break;
      default: break;
    }
  }
}

// A field `into` does not have yet, copied from `from`.
void copyField(Message& into, const Message& from, const FieldDescriptor* f) {
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: ri->SetInt32(&into, f, rf->GetInt32(from, f)); break;
    case FieldDescriptor::CPPTYPE_INT64: ri->SetInt64(&into, f, rf->GetInt64(from, f)); break;
    case FieldDescriptor::CPPTYPE_UINT32: ri->SetUInt32(&into, f, rf->GetUInt32(from, f)); break;
    case FieldDescriptor::CPPTYPE_UINT64: ri->SetUInt64(&into, f, rf->GetUInt64(from, f)); break;
    case FieldDescriptor::CPPTYPE_DOUBLE: ri->SetDouble(&into, f, rf->GetDouble(from, f)); break;
    case FieldDescriptor::CPPTYPE_FLOAT: ri->SetFloat(&into, f, rf->GetFloat(from, f)); break;
    case FieldDescriptor::CPPTYPE_BOOL: ri->SetBool(&into, f, rf->GetBool(from, f)); break;
    case FieldDescriptor::CPPTYPE_ENUM: ri->SetEnum(&into, f, rf->GetEnum(from, f)); break;
    case FieldDescriptor::CPPTYPE_STRING: ri->SetString(&into, f, rf->GetString(from, f)); break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      ri->MutableMessage(&into, f)->CopyFrom(rf->GetMessage(from, f));
      break;
  }
}

// A singular field both have: messages merge (atomic ones compare), scalars compare.
void mergeSetField(Message& into, const Message& from, const FieldDescriptor* f,
                   const std::string& here, std::vector<EvidenceConflict>& conflicts) {
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    const Message& a = ri->GetMessage(into, f);
    const Message& b = rf->GetMessage(from, f);
    if (isAtomic(a.GetDescriptor())) {
      if (!sameValue(a, b)) conflicts.push_back({here, show(a), show(b)});
    } else {
      merge(*ri->MutableMessage(&into, f), b, here, conflicts);
    }
    return;
  }
  const std::string a = showField(into, f);
  const std::string b = showField(from, f);
  if (a != b) conflicts.push_back({here, a, b});
}

void merge(Message& into, const Message& from, const std::string& path,
           std::vector<EvidenceConflict>& conflicts) {
  const Descriptor* d = into.GetDescriptor();
  const Reflection* ri = into.GetReflection();
  const Reflection* rf = from.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string here = path.empty() ? f->name() : path + "." + f->name();
    if (f->is_repeated()) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        mergeRepeatedMessages(into, from, f, here, conflicts);
      } else {
        mergeRepeatedScalars(into, from, f);
      }
    } else if (!rf->HasField(from, f)) {
      continue;
    } else if (!ri->HasField(into, f)) {
      copyField(into, from, f);
    } else {
      mergeSetField(into, from, f, here, conflicts);
    }
  }
}

}  // namespace

std::vector<EvidenceConflict> mergeEvidence(Message& into, const Message& from) {
  std::vector<EvidenceConflict> conflicts;
  if (into.GetDescriptor() != from.GetDescriptor()) return conflicts;
  merge(into, from, "", conflicts);
  return conflicts;
}

std::string describeConflict(const EvidenceConflict& c, const std::string& kept_source,
                             const std::string& other_source) {
  return printable(c.where) + ": '" + printable(c.kept, 120) + "' (" + printable(kept_source) +
         ", kept) vs '" + printable(c.other, 120) + "' (" + printable(other_source) + ")";
}

}  // namespace ibc::core
