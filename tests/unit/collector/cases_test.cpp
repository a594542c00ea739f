// Cases (service/cases.cpp): support certificates create, update, list and fetch them; a
// case covers only its tenant's snapshots; every change is checked, stored and logged.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>
#include <regex>
#include <tuple>

#include "ibc/collector/service/requests.h"
#include "service_fixture.h"

using ::testing::HasSubstr;

namespace ibc::collector {
namespace {

namespace v1 = ::ibcollect::v1;
using namespace ibc::test;  // the test PKI
using test::kNow;
using test::peerFor;
using test::ServiceTest;
using test::signWith;
using test::uploadFrame;

class CaseTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    const auto node02 = ca_.issue(agentSpec("acme", "node02"));
    for (const auto& [cred, node, t] :
         {std::tuple{agent_, "node01", 1000}, std::tuple{agent_, "node01", 2000},
          std::tuple{node02, "node02", 1500}}) {
      const auto env = signWith(cred, test::makeSnapshot(node, "77", t));
      ASSERT_TRUE(call(peerFor(cred), uploadFrame(env)).has_ack());
      ids_[std::string(node) + "@" + std::to_string(t)] = core::snapshotId(env);
    }
    const auto globex_agent = ca_.issue(agentSpec("globex", "g1"));
    const auto globex = signWith(globex_agent, test::makeSnapshot("g1", "77", 1000));
    ASSERT_TRUE(call(peerFor(globex_agent), uploadFrame(globex)).has_ack());
    globex_id_ = core::snapshotId(globex);
  }

  v1::CollectorResponse createForJob(const std::string& tenant, const std::string& job) {
    v1::CollectorRequest r;
    r.mutable_create_case()->set_tenant(tenant);
    r.mutable_create_case()->set_job_id(job);
    r.mutable_create_case()->set_title("slow all_reduce on node02");
    r.mutable_create_case()->add_nodes("node02");
    r.mutable_create_case()->add_finding_codes("PHY_ERRORS");
    r.mutable_create_case()->set_note("customer reports 40% lower busbw");
    return query(peerFor(support_), r);
  }

  v1::CollectorResponse update(const std::function<void(v1::UpdateCaseRequest&)>& fill,
                               const Peer* as = nullptr) {
    v1::CollectorRequest r;
    fill(*r.mutable_update_case());
    return query(as != nullptr ? *as : peerFor(support_), r);
  }

  std::map<std::string, std::string> ids_;
  std::string globex_id_;
};

TEST_F(CaseTest, ACaseForAJobCoversTheNewestSnapshotOfEveryNode) {
  const auto r = createForJob("acme", "77");
  ASSERT_TRUE(r.has_case_info()) << r.DebugString();
  const auto& c = r.case_info();
  EXPECT_EQ(c.case_id().rfind("case-", 0), 0u) << c.case_id();
  EXPECT_EQ(c.tenant(), "acme");
  EXPECT_EQ(c.state(), v1::CASE_STATE_OPEN);
  EXPECT_EQ(c.revision(), 1u);
  EXPECT_EQ(c.created_by(), "alice");
  std::vector<std::string> want = {ids_["node01@2000"], ids_["node02@1500"]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(std::vector<std::string>(c.snapshot_ids().begin(), c.snapshot_ids().end()), want);
  ASSERT_EQ(c.notes_size(), 1);
  EXPECT_EQ(c.notes(0).author(), "alice");
  EXPECT_TRUE(log_.contains("event=case_created case=" + c.case_id() + " tenant=acme job=77"));

  // Stored: fetch by id alone and with its tenant; another tenant does not see it.
  v1::CollectorRequest fetch;
  fetch.mutable_fetch_case()->set_case_id(c.case_id());
  const auto got = query(peerFor(support_), fetch);
  ASSERT_TRUE(got.has_case_info());
  EXPECT_EQ(got.case_info().SerializeAsString(), c.SerializeAsString());
  fetch.mutable_fetch_case()->set_tenant("globex");
  const auto other = query(peerFor(support_), fetch);
  ASSERT_TRUE(other.has_rejection());
  EXPECT_EQ(other.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
}

TEST_F(CaseTest, OnlySupportCertificatesWorkOnCases) {
  v1::CollectorRequest create;
  create.mutable_create_case()->set_tenant("acme");
  create.mutable_create_case()->set_job_id("77");
  v1::CollectorRequest list;
  list.mutable_list_cases();
  for (const auto& request : {create, list}) {
    const auto r = query(peerFor(agent_), request);
    ASSERT_TRUE(r.has_rejection());
    EXPECT_EQ(r.rejection().reason(), v1::REJECT_REASON_FORBIDDEN);
  }
  EXPECT_EQ(store_->listCases(v1::ListCasesRequest(), 10)->cases_size(), 0);
}

TEST_F(CaseTest, ACaseNeverCoversAnotherTenantsSnapshot) {
  v1::CollectorRequest r;
  r.mutable_create_case()->set_tenant("acme");
  r.mutable_create_case()->add_snapshot_ids(ids_["node01@1000"]);
  r.mutable_create_case()->add_snapshot_ids(globex_id_);
  const auto refused = query(peerFor(support_), r);
  ASSERT_TRUE(refused.has_rejection());
  EXPECT_EQ(refused.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_THAT(refused.rejection().message(), HasSubstr("of tenant acme"));

  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const auto added = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(made.case_info().case_id());
    u.add_add_snapshot_ids(globex_id_);
  });
  ASSERT_TRUE(added.has_rejection());
  EXPECT_EQ(added.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_EQ((*store_->getCase("acme", made.case_info().case_id()))->revision(), 1u);
}

TEST_F(CaseTest, UpdatesChangeStateAddNotesAttachHostResultsAndDetectConflicts) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const std::string id = made.case_info().case_id();

  const auto escalated = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.set_tenant("acme");
    u.set_expected_revision(1);
    u.set_state(v1::CASE_STATE_ESCALATED);
    u.set_add_note("handed to the host team");
    u.add_add_snapshot_ids(ids_["node01@1000"]);
    auto* h = u.mutable_attach_host_result();
    h->set_host("hv-17");
    h->set_report_json(R"({"nodes":[],"findings":[]})");
  });
  ASSERT_TRUE(escalated.has_case_info()) << escalated.DebugString();
  const auto& c = escalated.case_info();
  EXPECT_EQ(c.revision(), 2u);
  EXPECT_EQ(c.state(), v1::CASE_STATE_ESCALATED);
  EXPECT_EQ(c.notes_size(), 2);
  EXPECT_EQ(c.snapshot_ids_size(), 3);
  ASSERT_EQ(c.host_results_size(), 1);
  EXPECT_EQ(c.host_results(0).attached_by(), "alice");
  EXPECT_TRUE(log_.contains("event=case_updated case=" + id + " tenant=acme revision=2"));

  // Attaching for the same host again replaces that host's result.
  const auto again = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.mutable_attach_host_result()->set_host("hv-17");
    u.mutable_attach_host_result()->set_report_json(R"({"nodes":[1]})");
  });
  ASSERT_TRUE(again.has_case_info());
  ASSERT_EQ(again.case_info().host_results_size(), 1);
  EXPECT_EQ(again.case_info().host_results(0).report_json(), R"({"nodes":[1]})");

  // A writer that read revision 1 lost the race: CONFLICT, nothing written.
  const auto stale = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.set_expected_revision(1);
    u.set_state(v1::CASE_STATE_CLOSED);
  });
  ASSERT_TRUE(stale.has_rejection());
  EXPECT_EQ(stale.rejection().reason(), v1::REJECT_REASON_CONFLICT);
  EXPECT_EQ((*store_->getCase("", id))->state(), v1::CASE_STATE_ESCALATED);

  // Open and escalated cases protect their snapshots from retention; closed ones do not.
  EXPECT_EQ(store_->snapshotsOfOpenCases()->size(), 3u);
  ASSERT_TRUE(update([&](v1::UpdateCaseRequest& u) {
                u.set_case_id(id);
                u.set_state(v1::CASE_STATE_CLOSED);
              }).has_case_info());
  EXPECT_TRUE(store_->snapshotsOfOpenCases()->empty());
}

TEST_F(CaseTest, BadCaseRequestsAreRefusedWithWhatIsWrong) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  const std::string id = made.case_info().case_id();
  struct Bad {
    std::function<void(v1::UpdateCaseRequest&)> fill;
    v1::RejectReason reason;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[&](auto& u) { u.set_case_id("case-nope"); }, v1::REJECT_REASON_NOT_FOUND, "no case"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_tenant("globex");
       },
       v1::REJECT_REASON_NOT_FOUND, "of tenant globex"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_add_note(std::string("bell\x07"));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "control character"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_add_note(std::string(20000, 'x'));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "at most"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.add_add_nodes("../etc");
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "node"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.set_state(static_cast<v1::CaseState>(42));
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "unknown case state"},
      {[&](auto& u) {
         u.set_case_id(id);
         u.mutable_attach_host_result()->set_host("hv-1");
         u.mutable_attach_host_result()->set_report_json("not json");
       },
       v1::REJECT_REASON_MALFORMED_REQUEST, "host-inspect"},
  };
  for (const auto& b : bad) {
    const auto r = update(b.fill);
    ASSERT_TRUE(r.has_rejection()) << b.message;
    EXPECT_EQ(r.rejection().reason(), b.reason) << r.rejection().message();
    EXPECT_THAT(r.rejection().message(), HasSubstr(b.message));
  }
  EXPECT_EQ((*store_->getCase("acme", id))->revision(), 1u);

  const auto no_job = createForJob("acme", "404");
  ASSERT_TRUE(no_job.has_rejection());
  EXPECT_EQ(no_job.rejection().reason(), v1::REJECT_REASON_NOT_FOUND);
  EXPECT_THAT(no_job.rejection().message(), HasSubstr("has no snapshots"));
}

TEST_F(CaseTest, CasesListByTenantJobAndStateWithPaging) {
  std::vector<std::string> acme_ids;
  for (int i = 0; i < 5; ++i) {
    const auto r = createForJob("acme", "77");
    ASSERT_TRUE(r.has_case_info());
    acme_ids.push_back(r.case_info().case_id());
  }
  ASSERT_TRUE(createForJob("globex", "77").has_case_info());
  ASSERT_TRUE(update([&](v1::UpdateCaseRequest& u) {
                u.set_case_id(acme_ids[0]);
                u.set_state(v1::CASE_STATE_CLOSED);
              }).has_case_info());

  v1::CollectorRequest list;
  list.mutable_list_cases()->set_tenant("acme");
  list.mutable_list_cases()->set_limit(2);
  std::vector<std::string> seen;
  for (int page = 0; page < 10; ++page) {
    const auto r = query(peerFor(support_), list);
    ASSERT_TRUE(r.has_cases());
    for (const auto& c : r.cases().cases()) {
      EXPECT_EQ(c.tenant(), "acme");
      EXPECT_EQ(c.notes_size(), 0);  // listings leave notes out
      seen.push_back(c.case_id());
    }
    if (!r.cases().more()) break;
    list.mutable_list_cases()->set_after_case("acme/" + seen.back());
  }
  std::sort(acme_ids.begin(), acme_ids.end());
  EXPECT_EQ(seen, acme_ids);

  v1::CollectorRequest open;
  open.mutable_list_cases()->set_state(v1::CASE_STATE_OPEN);
  const auto r = query(peerFor(support_), open);
  ASSERT_TRUE(r.has_cases());
  EXPECT_EQ(r.cases().cases_size(), 5);  // 4 of acme, 1 of globex
}

TEST_F(CaseTest, CasesSurviveARestartOfTheStore) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info());
  service_.reset();
  store_.reset();
  auto reopened = Store::open(dir_.path());
  ASSERT_TRUE(reopened.ok());
  auto got = (*reopened)->getCase("acme", made.case_info().case_id());
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->SerializeAsString(), made.case_info().SerializeAsString());
}

TEST_F(CaseTest, ACaseIdIsItsCreationDateAndEightHexDigitsAndItsReadIsLogged) {
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info()) << made.DebugString();
  const auto& c = made.case_info();
  const std::time_t t = std::chrono::system_clock::to_time_t(kNow);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[16];
  std::strftime(date, sizeof date, "%Y%m%d", &tm);
  EXPECT_TRUE(
      std::regex_match(c.case_id(), std::regex(std::string("case-") + date + "-[0-9a-f]{8}")))
      << c.case_id();
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(kNow.time_since_epoch()).count();
  EXPECT_EQ(c.created_at_unix_ms(), now_ms);
  EXPECT_EQ(c.updated_at_unix_ms(), now_ms);
  EXPECT_EQ(c.notes(0).at_unix_ms(), now_ms);
  EXPECT_EQ(std::vector<std::string>(c.nodes().begin(), c.nodes().end()),
            std::vector<std::string>{"node02"});
  EXPECT_EQ(std::vector<std::string>(c.finding_codes().begin(), c.finding_codes().end()),
            std::vector<std::string>{"PHY_ERRORS"});

  v1::CollectorRequest fetch;
  fetch.mutable_fetch_case()->set_case_id(c.case_id());
  ASSERT_TRUE(query(peerFor(support_), fetch).has_case_info());
  EXPECT_TRUE(log_.contains("event=case_read case=" + c.case_id() + " tenant=acme"));
}

TEST_F(CaseTest, ARequestNamingNoCaseOrNothingToCoverIsMalformed) {
  v1::CollectorRequest nothing;
  nothing.mutable_create_case()->set_tenant("acme");
  const auto create = query(peerFor(support_), nothing);
  ASSERT_TRUE(create.has_rejection()) << create.DebugString();
  EXPECT_EQ(create.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_THAT(create.rejection().message(), HasSubstr("name the snapshots the case covers"));

  nothing.mutable_create_case()->set_tenant("");
  nothing.mutable_create_case()->set_job_id("77");
  const auto no_tenant = query(peerFor(support_), nothing);
  ASSERT_TRUE(no_tenant.has_rejection()) << no_tenant.DebugString();
  EXPECT_EQ(no_tenant.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_THAT(no_tenant.rejection().message(), HasSubstr("tenant must be 1 to 256 bytes"));

  const auto unnamed = update([](v1::UpdateCaseRequest& u) { u.set_add_note("hello"); });
  ASSERT_TRUE(unnamed.has_rejection()) << unnamed.DebugString();
  EXPECT_EQ(unnamed.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_EQ(unnamed.rejection().message(), "name the case");
  EXPECT_EQ(store_->listCases(v1::ListCasesRequest(), 10)->cases_size(), 0);
}

TEST_F(CaseTest, AnUpdateThatWouldOutgrowTheCaseByteLimitIsRefusedAndChangesNothing) {
  service_.reset();
  options_.max_case_bytes = 2048;
  service_ = std::make_unique<Service>(
      *store_, *verifier_, log_, [] { return kNow; }, options_);
  const auto made = createForJob("acme", "77");
  ASSERT_TRUE(made.has_case_info()) << made.DebugString();
  const std::string id = made.case_info().case_id();
  const auto grown = update([&](v1::UpdateCaseRequest& u) {
    u.set_case_id(id);
    u.set_add_note(std::string(3000, 'n'));
  });
  ASSERT_TRUE(grown.has_rejection()) << grown.DebugString();
  EXPECT_EQ(grown.rejection().reason(), v1::REJECT_REASON_MALFORMED_REQUEST);
  EXPECT_THAT(grown.rejection().message(), HasSubstr("a case holds at most 2048"));
  const auto kept = store_->getCase("acme", id);
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->revision(), 1u);
  EXPECT_EQ((*kept)->notes_size(), 1);
}

}  // namespace
}  // namespace ibc::collector
