// `ibcollect case create|list|show|update|attach`: support cases in the collector
// (docs/security.md), with a support certificate. The console's escalate page makes the same
// requests.

#include <algorithm>
#include <ctime>
#include <functional>
#include <memory>
#include <variant>

#include <google/protobuf/util/json_util.h>

#include "ibc/agent/cli_transport.h"
#include "ibc/client/collector_api.h"
#include "ibc/core/findings.h"
#include "ibc/core/json.h"
#include "ibc/core/text.h"
#include "ibcollect/v1/host.pb.h"

namespace ibc::agent::cli {

namespace v1 = ::ibcollect::v1;

namespace {

constexpr const char* kCaseExitCodes =
    "Exit codes: 0 done, 3 usage error, 4 the collector could not be reached or\n"
    "refused (the reason is printed).";

struct CaseCreateArgs {
  std::string tenant;
  std::string job;
  std::vector<std::string> snapshot_ids;
  std::string title;
  std::string note;
  std::vector<std::string> nodes;
  std::vector<std::string> codes;
  std::string format = "text";
  TransportArgs transport;
};

struct CaseListArgs {
  std::string tenant;
  std::string job;
  std::string state;
  std::string format = "text";
  TransportArgs transport;
};

struct CaseShowArgs {
  std::string case_id;
  std::string tenant;
  std::string format = "text";
  TransportArgs transport;
};

struct CaseUpdateArgs {
  std::string case_id;
  std::string tenant;
  std::string state;
  std::string title;
  std::string note;
  std::vector<std::string> snapshot_ids;
  uint64_t expect_revision = 0;
  std::string report;  // attach: host-inspect --format json output
  std::string host;
  std::string format = "text";
  TransportArgs transport;
};

std::string utc(int64_t ms) { return ms <= 0 ? std::string("-") : core::formatUtc(ms / 1000); }

std::string stateName(v1::CaseState s) {
  switch (s) {
    case v1::CASE_STATE_OPEN: return "open";
    case v1::CASE_STATE_ESCALATED: return "escalated";
    case v1::CASE_STATE_CLOSED: return "closed";
    default: return "state-" + std::to_string(static_cast<int>(s));
  }
}

v1::CaseState stateFromName(const std::string& name) {
  if (name == "open") return v1::CASE_STATE_OPEN;
  if (name == "escalated") return v1::CASE_STATE_ESCALATED;
  if (name == "closed") return v1::CASE_STATE_CLOSED;
  return v1::CASE_STATE_UNSPECIFIED;
}

std::string p(const std::string& s) { return s.empty() ? "-" : core::printable(s, 200); }

void printCase(CliEnvironment& env, const v1::Case& c) {
  auto& o = env.out;
  o << "case " << p(c.case_id()) << "  " << stateName(c.state()) << "  revision " << c.revision()
    << "\n";
  o << "  tenant " << p(c.tenant()) << ", job " << p(c.job_id()) << "\n";
  if (!c.title().empty()) o << "  title: " << p(c.title()) << "\n";
  o << "  created by " << p(c.created_by()) << " at " << utc(c.created_at_unix_ms()) << ", updated "
    << utc(c.updated_at_unix_ms()) << "\n";
  o << "  snapshots: " << c.snapshot_ids_size() << "\n";
  for (const auto& id : c.snapshot_ids()) o << "    " << p(id) << "\n";
  if (c.nodes_size() > 0) {
    o << "  nodes:";
    for (const auto& n : c.nodes()) o << " " << p(n);
    o << "\n";
  }
  if (c.finding_codes_size() > 0) {
    o << "  findings:";
    for (const auto& f : c.finding_codes()) o << " " << p(f);
    o << "\n";
  }
  o << "  notes: " << c.notes_size() << "\n";
  for (const auto& n : c.notes()) {
    o << "    " << utc(n.at_unix_ms()) << " " << p(n.author()) << ":\n";
    core::forEachLine(n.text(), [&](std::string_view line, std::size_t) {
      o << "      " << core::printable(line, 400) << "\n";
    });
  }
  o << "  host results: " << c.host_results_size() << "\n";
  for (const auto& h : c.host_results()) {
    o << "    " << p(h.host()) << ", attached by " << p(h.attached_by()) << " at "
      << utc(h.attached_at_unix_ms()) << " (" << h.report_json().size() << " bytes)\n";
  }
}

// What a case command asks the collector for: one case, or a listing.
using CaseAnswer = std::variant<v1::Case, client::CaseListing>;
using CaseAsk = std::function<core::Result<CaseAnswer>(client::CollectorApi&)>;

// `case list` prints at most this many (a listing says when there are more).
constexpr std::size_t kMaxListed = 1000;

int printCaseListing(CliEnvironment& env, const client::CaseListing& list,
                     const std::string& format) {
  if (format == "json") {
    v1::CaseList message;
    for (const auto& c : list.cases) *message.add_cases() = c;
    message.set_more(list.more);
    env.out << core::messageToJson(message) << "\n";
    return core::kExitOk;
  }
  if (list.cases.empty()) env.out << "no cases\n";
  for (const auto& c : list.cases) {
    env.out << p(c.case_id()) << "  " << stateName(c.state()) << "  tenant " << p(c.tenant())
            << "  job " << p(c.job_id()) << "  " << c.snapshot_ids_size() << " snapshot(s)  "
            << c.host_results_size() << " host result(s)  " << p(c.title()) << "\n";
  }
  if (list.more) {
    env.out << "(the first " << list.cases.size()
            << " shown; narrow with --tenant, --job or --state)\n";
  }
  return core::kExitOk;
}

// Asks on a new connection (support certificate) and prints the answer. Exit 4 on any
// failure.
int caseCall(CliEnvironment& env, const TransportArgs& transport, const std::string& format,
             const char* what, const CaseAsk& ask) {
  auto config = deliveryConfig(env, transport, CredentialUse::Support);
  if (!config.ok()) {
    env.err << "ibcollect: " << config.error().message << "\n";
    return core::kExitUsage;
  }
  auto session = connectCollector(*config);
  core::Result<CaseAnswer> answer = session.ok() ? [&] {
    client::CollectorApi api(**session);
    return ask(api);
  }()
                                                 : core::Result<CaseAnswer>(session.error());
  if (!answer.ok()) {
    env.err << "ibcollect: case " << what << " at " << config->collector.text() << ": "
            << answer.error().message << "\n";
    return core::kExitCollectFailed;
  }
  if (const auto* list = std::get_if<client::CaseListing>(&*answer)) {
    return printCaseListing(env, *list, format);
  }
  const auto& one = std::get<v1::Case>(*answer);
  if (format == "json") {
    env.out << core::messageToJson(one) << "\n";
  } else {
    printCase(env, one);
  }
  return core::kExitOk;
}

// A call answering one case, as a CaseAsk.
template <typename Call>
CaseAsk oneCase(Call call) {
  return [call = std::move(call)](client::CollectorApi& api) -> core::Result<CaseAnswer> {
    auto got = call(api);
    if (!got.ok()) return got.error();
    return CaseAnswer(std::move(*got));
  };
}

int runCreate(CliEnvironment& env, const CaseCreateArgs& a) {
  if (a.job.empty() && a.snapshot_ids.empty()) {
    env.err << "ibcollect: case create needs --job ID (its newest snapshot of every node) or "
               "snapshot ids\nRun 'ibcollect case create --help' for usage.\n";
    return core::kExitUsage;
  }
  v1::CreateCaseRequest q;
  q.set_tenant(a.tenant);
  q.set_job_id(a.job);
  q.set_title(a.title);
  q.set_note(a.note);
  for (const auto& id : a.snapshot_ids) q.add_snapshot_ids(id);
  for (const auto& n : a.nodes) q.add_nodes(n);
  for (const auto& c : a.codes) q.add_finding_codes(c);
  return caseCall(env, a.transport, a.format, "create",
                  oneCase([q](client::CollectorApi& api) { return api.createCase(q); }));
}

int runList(CliEnvironment& env, const CaseListArgs& a) {
  v1::ListCasesRequest q;
  q.set_tenant(a.tenant);
  q.set_job_id(a.job);
  q.set_state(stateFromName(a.state));
  return caseCall(env, a.transport, a.format, "list",
                  [q](client::CollectorApi& api) -> core::Result<CaseAnswer> {
                    auto got = api.listCases(q, kMaxListed);
                    if (!got.ok()) return got.error();
                    return CaseAnswer(std::move(*got));
                  });
}

int runShow(CliEnvironment& env, const CaseShowArgs& a) {
  return caseCall(env, a.transport, a.format, "show", oneCase([&a](client::CollectorApi& api) {
                    return api.fetchCase(a.case_id, a.tenant);
                  }));
}

int runUpdate(CliEnvironment& env, const CaseUpdateArgs& a, bool attach) {
  v1::UpdateCaseRequest update;
  auto* q = &update;
  q->set_case_id(a.case_id);
  q->set_tenant(a.tenant);
  q->set_expected_revision(a.expect_revision);
  q->set_state(stateFromName(a.state));
  q->set_title(a.title);
  q->set_add_note(a.note);
  for (const auto& id : a.snapshot_ids) q->add_add_snapshot_ids(id);
  if (attach) {
    auto bytes = env.files.readFile(a.report, 4u << 20);
    if (!bytes.ok()) {
      env.err << "ibcollect: cannot read " << a.report << ": " << bytes.error().message << "\n";
      return core::kExitCollectFailed;
    }
    // It must be host-inspect's JSON document; it names the host it ran on.
    v1::HostInspection report;
    google::protobuf::util::JsonParseOptions lenient;
    lenient.ignore_unknown_fields = true;
    if (!google::protobuf::util::JsonStringToMessage(*bytes, &report, lenient).ok()) {
      env.err << "ibcollect: " << a.report
              << " is not the JSON of `ibcollect host-inspect --format json`\n";
      return core::kExitUsage;
    }
    const std::string host = a.host.empty() ? report.host() : a.host;
    if (host.empty()) {
      env.err << "ibcollect: " << a.report << " does not name its host: add --host NAME\n";
      return core::kExitUsage;
    }
    q->mutable_attach_host_result()->set_host(host);
    q->mutable_attach_host_result()->set_report_json(std::move(*bytes));
  } else if (a.state.empty() && a.title.empty() && a.note.empty() && a.snapshot_ids.empty()) {
    env.err << "ibcollect: case update needs something to change: --state, --title, --note or "
               "--add-snapshot\n";
    return core::kExitUsage;
  }
  return caseCall(env, a.transport, a.format, attach ? "attach" : "update",
                  oneCase([&update](client::CollectorApi& api) { return api.updateCase(update); }));
}

void addFormat(CLI::App* cmd, std::string& format) {
  cmd->add_option("--format", format, "text (for people) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

}  // namespace

void addCaseCommands(CLI::App& app, CliEnvironment& env, std::vector<Command>& commands) {
  CLI::App* cases = app.add_subcommand(
      "case", "Support cases in the collector: create, list, show, update, attach host results");
  cases->require_subcommand(1);
  cases->footer(helpFooter(
      {"ibcollect case create --tenant acme --job 1234 --title 'slow all_reduce' \\",
       "    --collector c:7443 --ca ca.pem --cert me.pem --key me.key",
       "ibcollect case list --state open ...", "ibcollect case show case-20261125-0a1b2c3d ...",
       "ibcollect case update case-20261125-0a1b2c3d --state escalated ...",
       "(... = --collector, --ca, --cert, --key, or the config's keys)"},
      kCaseExitCodes));
  const auto states = CLI::IsMember({"open", "escalated", "closed"});

  auto ca = std::make_shared<CaseCreateArgs>();
  CLI::App* cr = cases->add_subcommand(
      "create", "Open a case on a job's newest snapshots (or the snapshot ids given)");
  cr->add_option("snapshot_ids", ca->snapshot_ids, "Snapshot ids (64 hex digits) to cover");
  cr->add_option("--tenant", ca->tenant, "The tenant whose job it is")->required();
  cr->add_option("--job", ca->job, "Slurm job id: covers its newest snapshot of every node");
  cr->add_option("--title", ca->title, "One line saying what is wrong");
  cr->add_option("--note", ca->note, "A first note");
  cr->add_option("--node", ca->nodes, "A suspect node (repeatable)");
  cr->add_option("--code", ca->codes, "A finding code the case is about (repeatable)");
  addFormat(cr, ca->format);
  addTransportOptions(cr, ca->transport, /*download=*/true);
  cr->footer(std::string("Example:\n  ibcollect case create --tenant acme --job 1234 --title "
                         "\"slow all_reduce\" \\\n      --collector c:7443 --ca ca.pem --cert "
                         "me.pem --key me.key\n\n") +
             kCaseExitCodes);

  auto la = std::make_shared<CaseListArgs>();
  CLI::App* li = cases->add_subcommand("list", "List cases (newest ids last)");
  li->add_option("--tenant", la->tenant, "Only this tenant's (default: every tenant)");
  li->add_option("--job", la->job, "Only cases of this job");
  li->add_option("--state", la->state, "open, escalated or closed")->check(states);
  addFormat(li, la->format);
  addTransportOptions(li, la->transport, /*download=*/true);
  li->footer(helpFooter({"ibcollect case list --tenant acme --state open --collector c:7443 ..."},
                        kCaseExitCodes));

  auto sa = std::make_shared<CaseShowArgs>();
  CLI::App* sh = cases->add_subcommand("show", "A case with its notes and host results");
  sh->add_option("case", sa->case_id, "Case id (case-YYYYMMDD-xxxxxxxx)")->required();
  sh->add_option("--tenant", sa->tenant, "Refuse the case unless it is this tenant's");
  addFormat(sh, sa->format);
  addTransportOptions(sh, sa->transport, /*download=*/true);
  sh->footer(
      helpFooter({"ibcollect case show case-20261125-0a1b2c3d --format json ..."}, kCaseExitCodes));

  auto ua = std::make_shared<CaseUpdateArgs>();
  CLI::App* up = cases->add_subcommand("update", "Change a case's state or title, add a note");
  up->add_option("case", ua->case_id, "Case id")->required();
  up->add_option("--tenant", ua->tenant, "Refuse the case unless it is this tenant's");
  up->add_option("--state", ua->state, "open, escalated or closed")->check(states);
  up->add_option("--title", ua->title, "New title");
  up->add_option("--note", ua->note, "A note to add");
  up->add_option("--add-snapshot", ua->snapshot_ids, "A snapshot id to add (repeatable)");
  up->add_option("--expect-revision", ua->expect_revision,
                 "Refuse (conflict) unless the case is still at this revision");
  addFormat(up, ua->format);
  addTransportOptions(up, ua->transport, /*download=*/true);
  up->footer(helpFooter({"ibcollect case update case-20261125-0a1b2c3d --state closed \\",
                         "    --note 'cable replaced on hv17 port 3' --expect-revision 4 ..."},
                        kCaseExitCodes));

  auto aa = std::make_shared<CaseUpdateArgs>();
  CLI::App* at =
      cases->add_subcommand("attach", "Attach a host-inspect result (--format json) to a case");
  at->add_option("case", aa->case_id, "Case id")->required();
  at->add_option("report", aa->report, "host-inspect --format json output")
      ->required()
      ->check(CLI::ExistingFile);
  at->add_option("--host", aa->host, "The physical host (default: the report's \"host\")");
  at->add_option("--tenant", aa->tenant, "Refuse the case unless it is this tenant's");
  addFormat(at, aa->format);
  addTransportOptions(at, aa->transport, /*download=*/true);
  at->footer(std::string("Example (on the physical host):\n"
                         "  ibcollect host-inspect --bundle case.ibbundle --format json > "
                         "hv17.json\n  ibcollect case attach case-20261125-0a1b2c3d hv17.json "
                         "--collector c:7443 ...\n\n") +
             kCaseExitCodes);

  commands.push_back({[cr] { return cr->parsed(); }, [&env, ca] { return runCreate(env, *ca); }});
  commands.push_back({[li] { return li->parsed(); }, [&env, la] { return runList(env, *la); }});
  commands.push_back({[sh] { return sh->parsed(); }, [&env, sa] { return runShow(env, *sa); }});
  commands.push_back(
      {[up] { return up->parsed(); }, [&env, ua] { return runUpdate(env, *ua, false); }});
  commands.push_back(
      {[at] { return at->parsed(); }, [&env, aa] { return runUpdate(env, *aa, true); }});
}

}  // namespace ibc::agent::cli
