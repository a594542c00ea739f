#include "ibc/core/json.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ibc/core/encoding.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// A streaming JSON writer: appends to one string, keeps only the nesting state. indent < 0
// writes one line; otherwise one member or element per line, `"key": value`, and empty
// containers as `{}` / `[]`.
class JsonWriter {
 public:
  JsonWriter(std::string& out, int indent) : out_(out), indent_(indent) {}

  void startObject() { open('{'); }
  void endObject() { close('}'); }
  void startArray() { open('['); }
  void endArray() { close(']'); }

  void key(std::string_view name) {
    separate();
    quoted(name);
    out_ += indent_ < 0 ? ":" : ": ";
    after_key_ = true;
  }

  void string(std::string_view s) {
    separate();
    quoted(s);
  }

  template <typename Number>
  void number(Number v) {
    separate();
    if constexpr (std::is_floating_point_v<Number>) {
      out_ += shortestDouble(v);
    } else {
      char buf[32];
      const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
      out_.append(buf, end);
    }
  }

  void boolean(bool v) {
    separate();
    out_ += v ? "true" : "false";
  }

  void null() {
    separate();
    out_ += "null";
  }

 private:
  struct Level {
    bool empty = true;
  };

  // Before a value or key: the comma and line break that separate it from its predecessor.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (levels_.empty()) return;
    if (!levels_.back().empty) out_ += ',';
    levels_.back().empty = false;
    newline(levels_.size());
  }

  void open(char c) {
    separate();
    out_ += c;
    levels_.push_back({});
  }

  void close(char c) {
    const bool empty = levels_.back().empty;
    levels_.pop_back();
    if (!empty) newline(levels_.size());
    out_ += c;
  }

  void newline(std::size_t depth) {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(depth * static_cast<std::size_t>(indent_), ' ');
  }

  void quoted(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    std::size_t run = 0;  // start of the pending stretch that needs no escaping
    for (std::size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(s.substr(run, i - run));
      run = i + 1;
      out_ += '\\';
      switch (c) {
        case '"': out_ += '"'; break;
        case '\\': out_ += '\\'; break;
        case '\n': out_ += 'n'; break;
        case '\r': out_ += 'r'; break;
        case '\t': out_ += 't'; break;
        case '\b': out_ += 'b'; break;
        case '\f': out_ += 'f'; break;
        default:
          out_ += "u00";
          out_ += kHex[c >> 4];
          out_ += kHex[c & 0xf];
      }
    }
    out_.append(s.substr(run));
    out_ += '"';
  }

  std::string& out_;
  const int indent_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

class ProtoJsonWriter {
 public:
  explicit ProtoJsonWriter(JsonWriter& w) : w_(w) {}

  void message(const Message& m) {
    w_.startObject();
    const auto* d = m.GetDescriptor();
    const Reflection* r = m.GetReflection();
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->is_repeated()) {
        key(f->name());
        w_.startArray();
        const int n = r->FieldSize(m, f);
        for (int k = 0; k < n; ++k) scalar(m, r, f, k);
        w_.endArray();
        continue;
      }
      // Fields with presence (sub-messages, proto3 `optional`) print only when set.
      if (f->has_presence() && !r->HasField(m, f)) continue;
      key(f->name());
      scalar(m, r, f, -1);
    }
    w_.endObject();
  }

 private:
  void key(const std::string& name) { w_.key(name); }

  void string(const std::string& s) {
    // Invalid UTF-8 never reaches here (inputs are sanitised on the way in); replace it
    // rather than emit a document no parser accepts if it ever does.
    if (isValidUtf8(s)) {
      w_.string(s);
    } else {
      w_.string(sanitizeUtf8(s));
    }
  }

  template <typename Int>
  void integerString(Int v) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    w_.string(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }

  void number(double v) {
    // The JSON mapping writes non-finite numbers as strings.
    if (std::isnan(v)) {
      w_.string("NaN");
    } else if (std::isinf(v)) {
      w_.string(v > 0 ? "Infinity" : "-Infinity");
    } else {
      w_.number(v);
    }
  }

  void scalar(const Message& m, const Reflection* r, const FieldDescriptor* f, int index) {
    const bool rep = index >= 0;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        w_.number(rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
        return;
      case FieldDescriptor::CPPTYPE_UINT32:
        w_.number(rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
        return;
      case FieldDescriptor::CPPTYPE_INT64:  // 64-bit integers are strings in the mapping
        integerString(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
        return;
      case FieldDescriptor::CPPTYPE_UINT64:
        integerString(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
        return;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        number(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
        return;
      case FieldDescriptor::CPPTYPE_FLOAT:
        number(static_cast<double>(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f)));
        return;
      case FieldDescriptor::CPPTYPE_BOOL:
        w_.boolean(rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f));
        return;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const int v = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
        if (const auto* ev = f->enum_type()->FindValueByNumber(v)) {
          string(ev->name());
        } else {
          w_.number(v);
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string scratch;
        const std::string& s = rep ? r->GetRepeatedStringReference(m, f, index, &scratch)
                                   : r->GetStringReference(m, f, &scratch);
        if (f->type() == FieldDescriptor::TYPE_BYTES) {
          string(base64Encode(s));
        } else {
          string(s);
        }
        return;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE:
        message(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
        return;
    }
    w_.null();
  }

  JsonWriter& w_;
};

}  // namespace

std::string messageToJson(const Message& message, int indent) {
  std::string out;
  out.reserve(message.ByteSizeLong() * 3 + 256);
  JsonWriter w(out, indent);
  ProtoJsonWriter(w).message(message);
  return out;
}

}  // namespace ibc::core
