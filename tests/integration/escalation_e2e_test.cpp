// The escalation loop end to end (issue 13, docs/security.md, docs/formats.md), every step a real
// binary: a certs/make-pki PKI → two nodes' snapshots signed by their own certificates from real
// fixture trees (one broken, one healthy) → uploaded to a real collector → a support case
// on the job → `bundle export --case` → `bundle verify` → `host-inspect --bundle --root` on
// the labelled-synthetic host trees (PF with physical errors, clean PF, VF absent) →
// `--attach-to` with a provider certificate → verify → `bundle show`; and the host result
// attached to the case travels into the next export. An agent certificate attaching and
// host-inspect on a tampered bundle are refused (issue 21).

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "collector_process.h"
#include "fixture_trees.h"
#include "ibc/bundle/bundle_archive.h"
#include "ibc/os/os.h"
#include "ibcollect_run.h"

using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;
using ibc::os::CommandResult;
using ibc::os::ProcessRunner;

using ibc::test::kBrokenTree;
using ibc::test::kHealthyTree;

std::string pfFixture(const std::string& prefix) {
  const std::string dir = std::string(IBC_FIXTURES_DIR) + "/real/pf";
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) return e.path().string();
  }
  ADD_FAILURE() << "no fixture " << prefix;
  return {};
}

class Escalation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (fs::temp_directory_path() / ("ibc-escalation-" + std::to_string(::getpid())));
    fs::remove_all(root_);
    fs::create_directories(root_);
    ProcessRunner runner;
    auto made =
        runner.run({IBC_MAKE_PKI, path("pki"), "--agent", "acme/node01", "--agent", "acme/node02",
                    "--agent", "globex/g1", "--support", "alice", "--provider", "hank"},
                   std::chrono::seconds(60));
    ASSERT_TRUE(made.ok());
    ASSERT_EQ(made->exit_code, 0) << made->err;
    auto trees = runner.run({"python3", IBC_HOST_TREES_SCRIPT, IBC_FIXTURES_DIR, path("hosts")},
                            std::chrono::seconds(60));
    ASSERT_TRUE(trees.ok());
    ASSERT_EQ(trees->exit_code, 0) << trees->err;
    collector_ = std::make_unique<ibc::test::CollectorProcess>(
        IBC_COLLECTOR_BINARY, ibc::test::collectorArgs(path("pki"), path("data")),
        path("collector.log"));
    ASSERT_GT(collector_->port(), 0);
    for (const auto& [node, tree] :
         {std::pair<std::string, std::string>{"node01", kBrokenTree}, {"node02", kHealthyTree}}) {
      const std::string copy = ibc::test::treeAsNode(tree, root_ / ("tree-" + node), node);
      const std::string cert = pki("agents/acme/" + node);
      auto r = run({"snapshot", "--root", copy, "--job", "77", "--cert", cert + ".pem", "--key",
                    cert + ".key", "-o", path(node + ".ibsnap"), "-q"});
      ASSERT_LE(r.exit_code, 2) << r.err;
      auto up = run({"upload", path(node + ".ibsnap"), "--collector", collector_->address(), "--ca",
                     pki("ca.pem"), "--cert", cert + ".pem", "--key", cert + ".key"});
      ASSERT_EQ(up.exit_code, 0) << up.err;
    }
    auto created = run(support({"case", "create", "--tenant", "acme", "--job", "77", "--title",
                                "slow all_reduce", "--node", "node01", "--code", "CQE_ERRORS"}));
    ASSERT_EQ(created.exit_code, 0) << created.err;
    ASSERT_EQ(created.out.rfind("case case-", 0), 0u) << created.out;
    case_id_ = created.out.substr(5, created.out.find(' ', 5) - 5);
  }
  static void TearDownTestSuite() {
    collector_.reset();
    fs::remove_all(root_);
  }

  static CommandResult run(std::vector<std::string> args) {
    return ibc::test::runIbcollect(std::move(args));
  }
  // The support engineer's connection flags appended.
  static std::vector<std::string> support(std::vector<std::string> args) {
    for (const auto& a : {std::string("--collector"), collector_->address(), std::string("--ca"),
                          pki("ca.pem"), std::string("--cert"), pki("support/alice.pem"),
                          std::string("--key"), pki("support/alice.key")}) {
      args.push_back(a);
    }
    return args;
  }
  static std::string path(const std::string& name) { return (root_ / name).string(); }
  static std::string pki(const std::string& name) { return path("pki/" + name); }
  static std::string host(const std::string& name) { return path("hosts/" + name); }

  static CommandResult verify(const std::string& file) {
    return run({"bundle", "verify", file, "--ca", pki("ca.pem")});
  }
  // `host-inspect --bundle BUNDLE --ca CA` and the rest of `args`.
  static CommandResult inspect(const std::string& bundle, std::vector<std::string> args) {
    args.insert(args.begin(), {"host-inspect", "--bundle", bundle, "--ca", pki("ca.pem")});
    return run(args);
  }
  static google::protobuf::Struct json(const std::string& text) {
    google::protobuf::Struct s;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text.substr(0, 400);
    return s;
  }
  static std::string field(const google::protobuf::Struct& s, const std::string& name) {
    const auto& v = s.fields().at(name);
    return v.has_string_value() ? v.string_value()
                                : std::to_string(static_cast<int>(v.number_value()));
  }
  static std::vector<std::string> codes(const google::protobuf::Struct& doc) {
    std::vector<std::string> out;
    for (const auto& f : doc.fields().at("findings").list_value().values()) {
      out.push_back(f.struct_value().fields().at("code").string_value());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  static fs::path root_;
  static std::unique_ptr<ibc::test::CollectorProcess> collector_;
  static std::string case_id_;
};

fs::path Escalation::root_;
std::unique_ptr<ibc::test::CollectorProcess> Escalation::collector_;
std::string Escalation::case_id_;

TEST_F(Escalation, ACaseIsExportedInspectedOnTheHostAttachedAndStillVerifies) {
  const std::string bundle = path("case.ibbundle");
  auto ex = run(support({"bundle", "export", "--case", case_id_, "-o", bundle}));
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_THAT(ex.err, HasSubstr("fetched case " + case_id_ + ": 2 snapshot(s)"));
  auto v = verify(bundle);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  auto show = run({"bundle", "show", bundle});
  EXPECT_THAT(show.out, HasSubstr("case " + case_id_ + ", tenant acme, job 77"));

  // The PF with physical errors hosts the broken node's VF as VF 1: mapped by node GUID and
  // judged with the real PF-side captures.
  auto inspected = inspect(
      bundle, {"--root", host("bundle-pf-errors"), "--paste",
               pfFixture("dmesg-pf_mlx5-health-synd"), "--paste", pfFixture("ethtool-m_sfp"),
               "--paste", pfFixture("iplink-pf_cx5-eth-p4p1"), "--format", "json"});
  EXPECT_EQ(inspected.exit_code, 2) << inspected.err;
  auto doc = json(inspected.out);
  ASSERT_EQ(doc.fields().at("vf_map").list_value().values_size(), 1) << inspected.out;
  const auto& m = doc.fields().at("vf_map").list_value().values(0).struct_value();
  EXPECT_EQ(field(m, "node"), "node01");
  EXPECT_EQ(field(m, "pf_pci"), "0001:19:00.0");
  EXPECT_EQ(field(m, "vf_index"), "1");
  EXPECT_EQ(field(m, "matched_by"), "node_guid (sriov/1/node)");
  EXPECT_EQ(codes(doc), (std::vector<std::string>{"PF_FW", "PF_MODULE", "PF_PORT_DOWN"}));

  // The clean PF hosts it as VF 2; the third host does not have it.
  auto clean = inspect(bundle, {"--root", host("bundle-pf-clean"), "--paste",
                                pfFixture("mlxlink-m-c_bf3"), "--format", "json"});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  doc = json(clean.out);
  EXPECT_EQ(field(doc.fields().at("vf_map").list_value().values(0).struct_value(), "vf_index"),
            "2");
  EXPECT_EQ(codes(doc), std::vector<std::string>{"PF_CLEAN"});
  auto absent = inspect(bundle, {"--root", host("vf-absent"), "--format", "json"});
  EXPECT_EQ(absent.exit_code, 2) << absent.err;
  EXPECT_EQ(codes(json(absent.out)), std::vector<std::string>{"PF_NOT_FOUND"});

  // Attached to the bundle by a provider host engineer: a signed attachment record, the
  // exporter's signature untouched; still verifies, and verify and show list both signers.
  const std::string manifest_before =
      ibc::bundle::readBundleArchive(ibc::test::readAll(bundle))->at("manifest.sig");
  auto attached =
      inspect(bundle, {"--root", host("bundle-pf-errors"), "--paste",
                       pfFixture("dmesg-pf_mlx5-health-synd"), "--attach-to", bundle, "--cert",
                       pki("provider/hank.pem"), "--key", pki("provider/hank.key")});
  EXPECT_EQ(attached.exit_code, 2) << attached.err;
  EXPECT_THAT(attached.err, HasSubstr("attached host/host-pf-errors.json to " + bundle +
                                      ", signed by CN=hank,OU=provider,O=ibcollect (provider)"));
  v = verify(bundle);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out,
              HasSubstr("OK 11 members; manifest signed by CN=alice,OU=support,O=ibcollect"));
  EXPECT_THAT(v.out, HasSubstr("signers (2):\n"
                               "  exporter  CN=alice,OU=support,O=ibcollect (support)  signed "
                               "manifest.json\n"
                               "  attachment 1  CN=hank,OU=provider,O=ibcollect (provider)  signed "
                               "host/host-pf-errors.json\n"));
  show = run({"bundle", "show", bundle});
  EXPECT_THAT(show.out,
              HasSubstr("host results attached (1):\n  host/host-pf-errors.json  host "
                        "host-pf-errors, attached by CN=hank,OU=provider,O=ibcollect (provider)"));
  EXPECT_THAT(show.out,
              HasSubstr("  attachment 1  CN=hank,OU=provider,O=ibcollect (provider)  signed "
                        "host/host-pf-errors.json\n"));
  auto members = ibc::bundle::readBundleArchive(ibc::test::readAll(bundle));
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->at("manifest.sig"), manifest_before);
  EXPECT_EQ(members->count("attachments/001.json"), 1u);

  // A second attachment, by the support engineer, follows the first.
  auto second = inspect(bundle, {"--root", host("bundle-pf-clean"), "--attach-to", bundle, "--cert",
                                 pki("support/alice.pem"), "--key", pki("support/alice.key")});
  EXPECT_LE(second.exit_code, 2) << second.err;
  EXPECT_THAT(second.err, HasSubstr("attached host/host-pf-clean.json"));
  v = verify(bundle);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out, HasSubstr("  attachment 2  CN=alice,OU=support,O=ibcollect (support)  signed "
                               "host/host-pf-clean.json\n"));

  // A byte flipped in the attached member is named by verify.
  members = ibc::bundle::readBundleArchive(ibc::test::readAll(bundle));
  ASSERT_TRUE(members.ok());
  auto& h = members->at("host/host-pf-errors.json");
  h[h.size() / 2] ^= 0x20;
  auto flipped = ibc::bundle::writeBundleArchive(*members);
  ASSERT_TRUE(flipped.ok());
  std::ofstream(path("flipped.ibbundle"), std::ios::binary) << *flipped;
  v = verify(path("flipped.ibbundle"));
  EXPECT_EQ(v.exit_code, 5);
  EXPECT_THAT(v.out, HasSubstr("FAILED host/host-pf-errors.json: hash: "));
}

// Issue 21: an agent key attaching, and host-inspect on a tampered bundle, are refused.
TEST_F(Escalation, AnAgentCannotAttachAndATamperedBundleIsNeitherInspectedNorAttachedTo) {
  const std::string bundle = path("guarded.ibbundle");
  ASSERT_EQ(run(support({"bundle", "export", "--case", case_id_, "-o", bundle})).exit_code, 0);
  const std::string original = ibc::test::readAll(bundle);

  for (const std::string cert : {"agents/acme/node01", "agents/globex/g1"}) {
    auto r = inspect(bundle, {"--root", host("bundle-pf-errors"), "--attach-to", bundle, "--cert",
                              pki(cert + ".pem"), "--key", pki(cert + ".key")});
    EXPECT_EQ(r.exit_code, 3) << cert << "\n" << r.err;
    EXPECT_THAT(r.err,
                HasSubstr("may not attach to a bundle: only a provider or support certificate"));
    EXPECT_EQ(r.out, "") << "refused before anything was inspected";
    EXPECT_EQ(ibc::test::readAll(bundle), original) << cert;
  }

  // The PF runbook edited after export (the host would inspect another VF).
  auto members = ibc::bundle::readBundleArchive(original);
  ASSERT_TRUE(members.ok());
  auto& pf = members->at("pf-inspection.json");
  pf[pf.size() / 2] ^= 0x01;
  auto tampered_bytes = ibc::bundle::writeBundleArchive(*members);
  ASSERT_TRUE(tampered_bytes.ok());
  const std::string tampered = path("tampered.ibbundle");
  std::ofstream(tampered, std::ios::binary) << *tampered_bytes;
  auto r = inspect(tampered, {"--root", host("bundle-pf-errors"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("FAILED pf-inspection.json: hash: "));
  EXPECT_THAT(r.err, HasSubstr("not inspecting for a bundle that does not verify"));

  // --attach-to a tampered bundle (inspecting by --vf): nothing is attached.
  r = run({"host-inspect", "--vf", "0000:42:00.3", "--root", host("bundle-pf-clean"), "--attach-to",
           tampered, "--ca", pki("ca.pem"), "--cert", pki("provider/hank.pem"), "--key",
           pki("provider/hank.key")});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_THAT(r.err, HasSubstr("FAILED pf-inspection.json: hash: "));
  EXPECT_THAT(r.err, HasSubstr("nothing attached to a bundle that does not verify"));
  EXPECT_EQ(ibc::test::readAll(tampered), *tampered_bytes);

  // Without a CA there is nothing to verify against: a usage error.
  r = run({"host-inspect", "--bundle", bundle, "--root", host("bundle-pf-errors"), "--config",
           "/dev/null"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("give --ca CA.pem"));
}

TEST_F(Escalation, AHostResultAttachedToTheCaseTravelsIntoTheNextExport) {
  const std::string bundle = path("for-host.ibbundle");
  ASSERT_EQ(run(support({"bundle", "export", "--case", case_id_, "-o", bundle})).exit_code, 0);
  auto report = inspect(bundle, {"--root", host("bundle-pf-clean"), "--paste",
                                 pfFixture("mlxlink-m-c_bf3"), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::ofstream(path("hv.json")) << report.out;

  auto attached = run(support({"case", "attach", case_id_, path("hv.json")}));
  ASSERT_EQ(attached.exit_code, 0) << attached.err;
  EXPECT_THAT(attached.out, HasSubstr("host results: 1\n    host-pf-clean, attached by alice"));
  auto escalated = run(support({"case", "update", case_id_, "--state", "escalated", "--note",
                                "PF clean; switch port next"}));
  ASSERT_EQ(escalated.exit_code, 0) << escalated.err;
  EXPECT_THAT(escalated.out, HasSubstr("  escalated  revision"));

  const std::string next = path("next.ibbundle");
  auto ex = run(support({"bundle", "export", "--case", case_id_, "-o", next}));
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_THAT(ex.err, HasSubstr("1 host result(s)"));
  auto v = verify(next);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  auto members = ibc::bundle::readBundleArchive(ibc::test::readAll(next));
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->count("host/host-pf-clean.json"), 1u);
  EXPECT_EQ(members->at("host/host-pf-clean.json"), report.out);

  auto listed = run(support({"case", "list", "--tenant", "acme", "--state", "escalated"}));
  EXPECT_THAT(listed.out,
              HasSubstr(case_id_ + "  escalated  tenant acme  job 77  2 snapshot(s)  1 host "
                                   "result(s)  slow all_reduce"));
}

TEST_F(Escalation, CasesRefuseAgentsOtherTenantsAndStaleRevisions) {
  const std::string agent = pki("agents/acme/node01");
  auto as_agent = run({"case", "list", "--collector", collector_->address(), "--ca", pki("ca.pem"),
                       "--cert", agent + ".pem", "--key", agent + ".key"});
  EXPECT_EQ(as_agent.exit_code, 3);
  EXPECT_THAT(as_agent.err, HasSubstr("needs a support certificate"));

  auto other = run(support({"case", "show", case_id_, "--tenant", "globex"}));
  EXPECT_EQ(other.exit_code, 4);
  EXPECT_THAT(other.err, HasSubstr("not_found: no case " + case_id_ + " of tenant globex"));
  auto missing = run(support(
      {"bundle", "export", "--case", "case-20000101-00000000", "-o", path("missing.ibbundle")}));
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_THAT(missing.err, HasSubstr("not_found"));
  EXPECT_FALSE(fs::exists(path("missing.ibbundle")));

  ASSERT_EQ(run(support({"case", "update", case_id_, "--note", "first"})).exit_code, 0);
  auto stale =
      run(support({"case", "update", case_id_, "--note", "late", "--expect-revision", "1"}));
  EXPECT_EQ(stale.exit_code, 4);
  EXPECT_THAT(stale.err, HasSubstr("conflict: case " + case_id_ + " is at revision"));
  EXPECT_THAT(collector_->log(), HasSubstr("event=request_rejected reason=conflict"));
}

}  // namespace
