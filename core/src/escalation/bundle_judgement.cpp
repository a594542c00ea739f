#include "ibc/core/bundle_judgement.h"

#include <google/protobuf/util/json_util.h>

#include <map>
#include <tuple>

#include "ibc/core/job_verdict.h"
#include "ibc/core/report.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/core/text.h"

namespace ibc::core {

namespace v1 = ::ibcollect::v1;

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, uint32_t>;

Key keyOf(const v1::Finding& f) {
  return {f.node(), f.source(), f.code(), f.severity(), f.device(), f.port()};
}

std::string describe(const Key& k) {
  const auto& [node, source, code, severity, device, port] = k;
  std::string s =
      printable(node, 120) + " " + printable(code, 64) + " (" + printable(severity, 16) + ")";
  if (!device.empty()) s += " " + printable(device, 64);
  if (port != 0) s += " port " + std::to_string(port);
  return s;
}

}  // namespace

BundleRejudgement rejudgeBundle(const BundleMembers& members) {
  BundleRejudgement out;
  const auto m = members.find(kManifestMember);
  if (m == members.end()) {
    out.reason = "the bundle has no manifest.json";
    return out;
  }
  auto manifest = parseManifest(m->second);
  if (!manifest.ok()) {
    out.reason = manifest.error().message;
    return out;
  }
  if (manifest->redacted()) {
    out.reason =
        "the bundle is redacted: its signed snapshots were left out, so its findings "
        "cannot be judged again";
    return out;
  }
  std::vector<AnalyzedNode> nodes;
  for (const auto& n : manifest->nodes()) {
    const auto it = members.find(n.member());
    if (it == members.end()) {
      out.reason = "snapshot member '" + printable(n.member(), 200) + "' is missing";
      return out;
    }
    auto env = decodeSnapshotFile(it->second);
    if (!env.ok()) {
      out.reason = n.member() + ": " + env.error().message;
      return out;
    }
    auto snap = openSnapshot(*env);
    if (!snap.ok()) {
      out.reason = n.member() + ": " + snap.error().message;
      return out;
    }
    AnalyzedNode a;
    a.snapshot = std::move(*snap);
    a.snapshot_file = n.member();
    nodes.push_back(std::move(a));
  }
  const auto f = members.find(kFindingsMember);
  if (f == members.end()) {
    out.reason = "the bundle has no findings.json";
    return out;
  }
  v1::Report written;
  google::protobuf::util::JsonParseOptions po;
  po.ignore_unknown_fields = true;  // a newer exporter's fields
  if (const auto st = google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(f->second.data(), f->second.size()), &written, po);
      !st.ok()) {
    out.reason = "findings.json does not parse: " + printable(st.ToString(), 300);
    return out;
  }
  JobVerdictOptions options;
  if (manifest->has_expect_rate_gbps())
    options.rules.expect_rate_gbps = manifest->expect_rate_gbps();
  if (manifest->has_expect_busbw_gbs())
    options.rules.expect_busbw_gbs = manifest->expect_busbw_gbs();
  judgeJob(nodes, options);
  const auto again = buildReport(std::move(nodes));
  std::map<Key, int> count;  // > 0: judged again only; < 0: in findings.json only
  for (const auto& x : again.findings()) ++count[keyOf(x)];
  for (const auto& x : written.findings()) --count[keyOf(x)];
  out.judged = true;
  out.findings_compared = static_cast<std::size_t>(again.findings_size());
  for (const auto& [k, n] : count) {
    if (n > 0) {
      out.differences.push_back(describe(k) + ": judged from the snapshots, missing from " +
                                std::string(kFindingsMember));
    } else if (n < 0) {
      out.differences.push_back(describe(k) + ": in " + std::string(kFindingsMember) +
                                ", not found when the snapshots are judged again");
    }
  }
  return out;
}

}  // namespace ibc::core
