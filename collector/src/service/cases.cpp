// Cases (docs/security.md): support certificates create, update, list and fetch them. A case
// belongs to one tenant and covers only that tenant's snapshots; every change is checked
// here, stored through Store::insertCase/updateCase (synced) and logged.

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <map>
#include <set>

#include "ibc/collector/service/requests.h"
#include "ibc/collector/service/service.h"
#include "ibc/core/text.h"

namespace ibc::collector {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::ErrorCode;
using core::Result;
using core::Status;

namespace {

constexpr std::size_t kMaxTitle = 200;
constexpr std::size_t kMaxNote = 16u << 10;
constexpr std::size_t kMaxName = 256;  // node names, finding codes, host names
constexpr std::size_t kMaxNames = 10000;
constexpr std::size_t kMaxNotes = 1000;
constexpr std::size_t kMaxHostResults = 64;
constexpr std::size_t kMaxHostReport = 4u << 20;

int64_t unixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

Error invalid(std::string message) { return Error{ErrorCode::InvalidArgument, std::move(message)}; }

// Text a person typed: UTF-8, no control characters but newlines and tabs, bounded.
Status checkText(std::string_view what, std::string_view text, std::size_t max) {
  if (text.size() > max) {
    return invalid(std::string(what) + " is " + std::to_string(text.size()) + " bytes; at most " +
                   std::to_string(max));
  }
  if (!core::isValidUtf8(text)) return invalid(std::string(what) + " is not UTF-8 text");
  for (unsigned char c : text) {
    if (c < 0x20 && c != '\n' && c != '\t') {
      return invalid(std::string(what) + " holds a control character");
    }
  }
  return {};
}

// A name (node, finding code, host): printable, no spaces or slashes.
Status checkName(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > kMaxName) {
    return invalid(std::string(what) + " must be 1 to " + std::to_string(kMaxName) + " bytes");
  }
  for (unsigned char c : name) {
    if (c <= 0x20 || c >= 0x7f || c == '/') {
      return invalid(std::string(what) + " \"" + core::printable(name, 64) +
                     "\" holds a character a name may not");
    }
  }
  return {};
}

// Adds `names` to `into` (kept sorted and unique), checking each.
Status addNames(std::string_view what, const google::protobuf::RepeatedPtrField<std::string>& names,
                google::protobuf::RepeatedPtrField<std::string>& into) {
  std::set<std::string> all(into.begin(), into.end());
  for (const auto& n : names) {
    if (auto ok = checkName(what, n); !ok.ok()) return ok;
    all.insert(n);
  }
  if (all.size() > kMaxNames) {
    return invalid("a case names at most " + std::to_string(kMaxNames) + " " + std::string(what) +
                   "s");
  }
  into.Clear();
  for (const auto& n : all) *into.Add() = n;
  return {};
}

// "case-YYYYMMDD-" and 8 random hex digits.
std::string newCaseId(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[16];
  std::strftime(date, sizeof date, "%Y%m%d", &tm);
  unsigned char random[4] = {};
  if (RAND_bytes(random, sizeof random) != 1) {
    // OpenSSL's CSPRNG failing is not a reason to refuse a case: the id only has to be
    // unique, and insertCase checks that.
    const auto n = static_cast<uint64_t>(now.time_since_epoch().count());
    for (int i = 0; i < 4; ++i) random[i] = static_cast<unsigned char>(n >> (8 * i));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = std::string("case-") + date + "-";
  for (unsigned char b : random) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

bool knownState(v1::CaseState s) {
  return s == v1::CASE_STATE_OPEN || s == v1::CASE_STATE_ESCALATED || s == v1::CASE_STATE_CLOSED;
}

std::string stateName(v1::CaseState s) {
  std::string name = v1::CaseState_Name(s);
  if (name.rfind("CASE_STATE_", 0) == 0) name.erase(0, 11);
  return core::toLower(name);
}

Status checkSize(const v1::Case& c, std::size_t max_bytes) {
  const std::size_t bytes = c.ByteSizeLong();
  if (bytes > max_bytes) {
    return Error{ErrorCode::TooLarge, "the case would be " + std::to_string(bytes) +
                                          " bytes; a case holds at most " +
                                          std::to_string(max_bytes)};
  }
  return {};
}

// Who changes a case, and when.
struct Stamp {
  std::string author;
  int64_t at_unix_ms = 0;
};

// A new case from a create_case request, its snapshots not yet resolved.
Result<v1::Case> caseFromRequest(const v1::CreateCaseRequest& q, const Stamp& stamp) {
  if (auto ok = checkName("tenant", q.tenant()); !ok.ok()) return ok.error();
  if (!q.job_id().empty()) {
    if (auto ok = checkName("job id", q.job_id()); !ok.ok()) return ok.error();
  }
  v1::Case c;
  c.set_tenant(q.tenant());
  c.set_job_id(q.job_id());
  c.set_state(v1::CASE_STATE_OPEN);
  Status ok = checkText("title", q.title(), kMaxTitle);
  c.set_title(q.title());
  if (ok.ok()) ok = checkText("note", q.note(), kMaxNote);
  if (ok.ok()) ok = addNames("node", q.nodes(), *c.mutable_nodes());
  if (ok.ok()) ok = addNames("finding code", q.finding_codes(), *c.mutable_finding_codes());
  if (!ok.ok()) return ok.error();
  if (!q.note().empty()) {
    auto* note = c.add_notes();
    note->set_at_unix_ms(stamp.at_unix_ms);
    note->set_author(stamp.author);
    note->set_text(q.note());
  }
  c.set_created_by(stamp.author);
  c.set_created_at_unix_ms(stamp.at_unix_ms);
  c.set_updated_at_unix_ms(stamp.at_unix_ms);
  c.set_revision(1);
  return c;
}

Status addNote(const std::string& text, const Stamp& stamp, v1::Case& c) {
  if (auto ok = checkText("note", text, kMaxNote); !ok.ok()) return ok;
  if (static_cast<std::size_t>(c.notes_size()) >= kMaxNotes) {
    return invalid("a case holds at most " + std::to_string(kMaxNotes) + " notes");
  }
  auto* note = c.add_notes();
  note->set_at_unix_ms(stamp.at_unix_ms);
  note->set_author(stamp.author);
  note->set_text(text);
  return {};
}

// One result per host: attaching a host again replaces its result.
Status attachHostResult(const v1::CaseHostResult& h, const Stamp& stamp, v1::Case& c) {
  if (auto ok = checkName("host", h.host()); !ok.ok()) return ok;
  if (auto ok = checkText("host report", h.report_json(), kMaxHostReport); !ok.ok()) return ok;
  if (h.report_json().empty() || core::trim(h.report_json()).front() != '{') {
    return invalid("a host result is the JSON document of host-inspect --format json");
  }
  auto& results = *c.mutable_host_results();
  auto same = std::find_if(results.begin(), results.end(),
                           [&](const v1::CaseHostResult& e) { return e.host() == h.host(); });
  v1::CaseHostResult* slot = same != results.end() ? &*same : nullptr;
  if (slot == nullptr) {
    if (static_cast<std::size_t>(results.size()) >= kMaxHostResults) {
      return invalid("a case holds at most " + std::to_string(kMaxHostResults) + " host results");
    }
    slot = c.add_host_results();
  }
  slot->set_host(h.host());
  slot->set_report_json(h.report_json());
  slot->set_attached_by(stamp.author);
  slot->set_attached_at_unix_ms(stamp.at_unix_ms);
  return {};
}

// What an update changes after its snapshots: names, a note, a host result.
Status applyAdditions(const v1::UpdateCaseRequest& q, const Stamp& stamp, v1::Case& c,
                      std::vector<std::string>& changes) {
  if (auto ok = addNames("node", q.add_nodes(), *c.mutable_nodes()); !ok.ok()) return ok;
  if (auto ok = addNames("finding code", q.add_finding_codes(), *c.mutable_finding_codes());
      !ok.ok()) {
    return ok;
  }
  if (!q.add_note().empty()) {
    if (auto ok = addNote(q.add_note(), stamp, c); !ok.ok()) return ok;
    changes.push_back("note");
  }
  if (q.has_attach_host_result()) {
    if (auto ok = attachHostResult(q.attach_host_result(), stamp, c); !ok.ok()) return ok;
    changes.push_back("host_result=" + q.attach_host_result().host());
  }
  return {};
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

using Response = v1::CollectorResponse;

Response caseAnswer(const RequestCall& call, v1::Case c) {
  Response r = answerTo(call);
  *r.mutable_case_info() = std::move(c);
  return r;
}

// Every snapshot id must be stored and belong to `tenant`: a case never covers another
// tenant's data, whatever the request says.
Status coverSnapshots(const RequestContext& service, std::string_view tenant,
                      const google::protobuf::RepeatedPtrField<std::string>& ids, v1::Case& c) {
  const ServiceOptions& options = service.options();
  std::set<std::string> all(c.snapshot_ids().begin(), c.snapshot_ids().end());
  for (const auto& sid : ids) {
    const std::string lower = core::toLower(sid);
    if (all.count(lower) != 0) continue;
    auto got = service.store().get(lower);
    if (!got.ok()) return got.error();
    if (!got->has_value() || (*got)->info.tenant() != tenant) {
      return Error{ErrorCode::NotFound,
                   "no snapshot " + core::printable(sid, 64) + " of tenant " + std::string(tenant)};
    }
    all.insert(lower);
    if (all.size() > options.max_case_snapshots) {
      return invalid("a case covers at most " + std::to_string(options.max_case_snapshots) +
                     " snapshots");
    }
  }
  c.clear_snapshot_ids();
  for (const auto& s : all) *c.add_snapshot_ids() = s;
  return {};
}

// The newest snapshot of every node of a job.
Result<google::protobuf::RepeatedPtrField<std::string>> newestOfJob(const RequestContext& service,
                                                                    std::string_view tenant,
                                                                    std::string_view job) {
  const ServiceOptions& options = service.options();
  std::map<std::string, std::pair<int64_t, std::string>> newest;
  v1::ListSnapshotsRequest list;
  list.set_tenant(std::string(tenant));
  list.set_job_id(std::string(job));
  do {
    auto page = service.store().listSnapshots(list, options.max_list_limit);
    if (!page.ok()) return page.error();
    for (const auto& info : page->snapshots()) {
      auto& n = newest[info.node()];
      if (n.second.empty() || info.collected_at_unix_ms() >= n.first) {
        n = {info.collected_at_unix_ms(), info.snapshot_id()};
      }
    }
    list.set_page_token(page->next_page_token());
  } while (!list.page_token().empty() && newest.size() <= options.max_case_snapshots);
  google::protobuf::RepeatedPtrField<std::string> ids;
  for (const auto& [node, n] : newest) *ids.Add() = n.second;
  return ids;
}

Response createCase(const RequestCall& call) {
  const RequestContext& service = call.service;
  const auto& q = call.request.create_case();
  const auto now = service.now();
  const Stamp stamp{call.peer.identity.name, unixMs(now)};
  auto c = caseFromRequest(q, stamp);
  if (!c.ok()) return service.failed(call, c.error());
  google::protobuf::RepeatedPtrField<std::string> ids = q.snapshot_ids();
  if (ids.empty()) {
    if (q.job_id().empty()) {
      return service.reject(call, v1::REJECT_REASON_MALFORMED_REQUEST,
                            "name the snapshots the case covers, or a job (its newest snapshot "
                            "of every node is taken)");
    }
    auto newest = newestOfJob(service, q.tenant(), q.job_id());
    if (!newest.ok()) return service.failed(call, newest.error());
    if (newest->empty()) {
      return service.reject(call, v1::REJECT_REASON_NOT_FOUND,
                            "job " + q.job_id() + " of tenant " + q.tenant() + " has no snapshots");
    }
    ids = std::move(*newest);
  }
  if (auto ok = coverSnapshots(service, q.tenant(), ids, *c); !ok.ok())
    return service.failed(call, ok.error());
  if (auto ok = checkSize(*c, service.options().max_case_bytes); !ok.ok())
    return service.failed(call, ok.error());
  for (int attempt = 0;; ++attempt) {
    c->set_case_id(newCaseId(now));
    auto inserted = service.store().insertCase(*c);
    if (!inserted.ok()) return service.failed(call, inserted.error());
    if (*inserted) break;
    if (attempt == 8) {
      return service.reject(call, v1::REJECT_REASON_STORAGE_FAILURE,
                            "could not draw an unused case id");
    }
  }
  service.log().event(LogLevel::Info, "case_created",
                      {{"case", c->case_id()},
                       {"tenant", c->tenant()},
                       {"job", c->job_id()},
                       {"snapshots", std::to_string(c->snapshot_ids_size())},
                       {"by", describePeer(call.peer)}});
  return caseAnswer(call, std::move(*c));
}

Response updateCase(const RequestCall& call) {
  const RequestContext& service = call.service;
  const auto& q = call.request.update_case();
  if (q.case_id().empty()) {
    return service.reject(call, v1::REJECT_REASON_MALFORMED_REQUEST, "name the case");
  }
  if (q.state() != v1::CASE_STATE_UNSPECIFIED && !knownState(q.state())) {
    return service.reject(call, v1::REJECT_REASON_MALFORMED_REQUEST,
                          "unknown case state " + std::to_string(static_cast<int>(q.state())));
  }
  const Stamp stamp{call.peer.identity.name, unixMs(service.now())};
  std::vector<std::string> changes;
  bool conflict = false;
  auto updated = service.store().updateCase(q.tenant(), q.case_id(), [&](v1::Case& c) -> Status {
    if (q.expected_revision() != 0 && q.expected_revision() != c.revision()) {
      conflict = true;
      return Error{ErrorCode::InvalidArgument,
                   "case " + c.case_id() + " is at revision " + std::to_string(c.revision()) +
                       ", not " + std::to_string(q.expected_revision()) +
                       ": someone changed it; fetch it again and retry"};
    }
    if (q.state() != v1::CASE_STATE_UNSPECIFIED && q.state() != c.state()) {
      changes.push_back("state=" + stateName(q.state()));
      c.set_state(q.state());
    }
    if (!q.title().empty()) {
      if (auto ok = checkText("title", q.title(), kMaxTitle); !ok.ok()) return ok;
      c.set_title(q.title());
      changes.push_back("title");
    }
    if (!q.add_snapshot_ids().empty()) {
      if (auto ok = coverSnapshots(service, c.tenant(), q.add_snapshot_ids(), c); !ok.ok())
        return ok;
      changes.push_back("snapshots=" + std::to_string(c.snapshot_ids_size()));
    }
    if (auto ok = applyAdditions(q, stamp, c, changes); !ok.ok()) return ok;
    c.set_revision(c.revision() + 1);
    c.set_updated_at_unix_ms(stamp.at_unix_ms);
    return checkSize(c, service.options().max_case_bytes);
  });
  if (!updated.ok() && conflict) {
    return service.reject(call, v1::REJECT_REASON_CONFLICT, updated.error().message);
  }
  if (!updated.ok()) return service.failed(call, updated.error());
  service.log().event(LogLevel::Info, "case_updated",
                      {{"case", updated->case_id()},
                       {"tenant", updated->tenant()},
                       {"revision", std::to_string(updated->revision())},
                       {"changes", joined(changes)},
                       {"by", describePeer(call.peer)}});
  return caseAnswer(call, std::move(*updated));
}

Response listCases(const RequestCall& call) {
  const RequestContext& service = call.service;
  const auto& q = call.request.list_cases();
  auto list = service.store().listCases(q, service.listLimit(q.limit()));
  if (!list.ok()) return service.failed(call, list.error());
  Response r = answerTo(call);
  *r.mutable_cases() = std::move(*list);
  return r;
}

// Reading a case is logged (case_read): cases hold a tenant's evidence.
Response fetchCase(const RequestCall& call) {
  const RequestContext& service = call.service;
  const auto& q = call.request.fetch_case();
  auto got = service.store().getCase(q.tenant(), q.case_id());
  if (!got.ok()) return service.failed(call, got.error());
  if (!got->has_value()) {
    return service.reject(
        call, v1::REJECT_REASON_NOT_FOUND,
        "no case " + core::printable(q.case_id(), 64) +
            (q.tenant().empty() ? "" : " of tenant " + core::printable(q.tenant(), 64)));
  }
  service.log().event(
      LogLevel::Info, "case_read",
      {{"case", (*got)->case_id()}, {"tenant", (*got)->tenant()}, {"by", describePeer(call.peer)}});
  return caseAnswer(call, std::move(**got));
}

using Kind = v1::CollectorRequest;
constexpr std::array<RequestKind, 4> kRows{{
    {Kind::kCreateCase, "create_case", kSupportRoles, onlySupportReads, answer<createCase>},
    {Kind::kUpdateCase, "update_case", kSupportRoles, onlySupportReads, answer<updateCase>},
    {Kind::kListCases, "list_cases", kSupportRoles, onlySupportReads, answer<listCases>},
    {Kind::kFetchCase, "fetch_case", kSupportRoles, onlySupportReads, answer<fetchCase>},
}};

}  // namespace

std::span<const RequestKind> caseRequestKinds() { return kRows; }

}  // namespace ibc::collector
