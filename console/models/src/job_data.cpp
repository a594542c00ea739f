#include "ibc/console/job_data.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "ibc/core/snapshot_file.h"

namespace ibc::console {

namespace v1 = ::ibcollect::v1;
using core::Error;
using core::Result;

namespace {

// Reads at most the snapshot file bound: a hostile or wrong file cannot exhaust memory.
Result<std::string> readBounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{core::ErrorCode::NotFound, path + ": " + std::strerror(errno)};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  if (size < 0) return Error{core::ErrorCode::Io, path + ": cannot tell its size"};
  if (static_cast<std::uint64_t>(size) > core::kMaxSnapshotFileBytes) {
    return Error{core::ErrorCode::TooLarge, path + ": larger than " +
                                                std::to_string(core::kMaxSnapshotFileBytes >> 20) +
                                                " MiB, not a snapshot file"};
  }
  in.seekg(0, std::ios::beg);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (in.gcount() != size) return Error{core::ErrorCode::Io, path + ": read error"};
  return bytes;
}

Result<v1::Snapshot> readSnapshot(const std::string& path) {
  auto bytes = readBounded(path);
  if (!bytes.ok()) return bytes.error();
  return core::readSnapshotFile(path, *bytes);
}

}  // namespace

int nodeOfFinding(const JobData& job, int finding) {
  if (finding < 0 || finding >= job.report.findings_size()) return -1;
  const auto& f = job.report.findings(finding);
  const auto& nodes = job.report.nodes();
  for (int i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (!f.source().empty() && !n.source().empty() ? f.source() == n.source()
                                                   : f.node() == n.node())
      return i;
  }
  return -1;
}

int severityRank(const std::string& severity) {
  if (severity == "critical") return 3;
  if (severity == "warning") return 2;
  if (severity == "info") return 1;
  return 0;
}

JobData diagnoseSnapshots(std::vector<v1::Snapshot> snapshots,
                          const std::vector<std::string>& files,
                          const core::CompareOptions& options) {
  JobData out;
  std::vector<core::AnalyzedNode> nodes;
  nodes.reserve(snapshots.size());
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    core::AnalyzedNode n;
    n.snapshot = snapshots[i];
    if (i < files.size()) n.snapshot_file = files[i];
    nodes.push_back(std::move(n));
  }
  core::diagnoseJobNodes(nodes, options);
  out.report = core::buildReport(std::move(nodes));
  out.snapshots = std::move(snapshots);
  return out;
}

JobData loadSnapshotFiles(const std::vector<std::string>& paths,
                          const core::CompareOptions& options,
                          const std::function<void(std::size_t, std::size_t)>& progress,
                          const std::atomic<bool>* cancel) {
  std::vector<v1::Snapshot> snapshots;
  std::vector<std::string> files;
  std::vector<std::string> errors;
  bool cancelled = false;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (cancel != nullptr && cancel->load()) {
      cancelled = true;
      break;
    }
    const std::string& path = paths[i];
    auto snap = readSnapshot(path);
    if (snap.ok()) {
      snapshots.push_back(std::move(snap).value());
      files.push_back(path);
    } else {
      errors.push_back(snap.error().message);
    }
    if (progress) progress(i + 1, paths.size());
  }
  JobData out = diagnoseSnapshots(std::move(snapshots), files, options);
  out.errors = std::move(errors);
  out.cancelled = cancelled;
  return out;
}

}  // namespace ibc::console
