#include "ibc/console/bundle_export.h"

#include <chrono>

#include "ibc/bundle/bundle_archive.h"
#include "ibc/console/bundle_plan.h"
#include "ibc/core/bundle.h"
#include "ibc/core/signing.h"
#include "ibc/core/snapshot_file.h"
#include "ibc/os/os.h"

namespace ibc::console {

using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Result<std::string> readFile(const std::string& path, const char* what) {
  auto bytes = os::RootedFilesystem("").readFile(path, core::kMaxSnapshotFileBytes);
  if (!bytes.ok())
    return Error{bytes.error().code, std::string(what) + " " + bytes.error().message};
  return bytes;
}

}  // namespace

Result<BundleExportInputs> bundleExportInputs(const JobData& job, const std::vector<int>& nodes) {
  if (nodes.empty()) return Error{ErrorCode::InvalidArgument, "no node checked to export"};
  BundleExportInputs out;
  out.nodes.reserve(nodes.size());
  for (const int n : nodes) {
    if (n < 0 || n >= job.report.nodes_size() || n >= static_cast<int>(job.snapshots.size()))
      return Error{ErrorCode::InvalidArgument, "no node " + std::to_string(n) + " in the job"};
    const auto i = static_cast<std::size_t>(n);
    const auto& node = job.report.nodes(n);
    BundleExportNode e;
    if (i < job.signed_files.size() && !job.signed_files[i].empty()) {
      e.signed_bytes = job.signed_files[i];
      e.source = node.source();
    } else {
      if (node.snapshot_file().empty())
        return Error{ErrorCode::NotFound, node.label() + ": its signed bytes are not at hand"};
      e.file = node.snapshot_file();
      e.source = e.file;
      e.shown = job.snapshots.bytes(i);
    }
    out.nodes.push_back(std::move(e));
  }
  return out;
}

Result<BundleExportResult> writeBundleExport(const BundleExportInputs& chosen,
                                             const BundleExportSettings& settings,
                                             const std::string& out_path) {
  if (chosen.nodes.empty()) return Error{ErrorCode::InvalidArgument, "no node checked to export"};
  if (settings.cert_file.empty() || settings.key_file.empty())
    return Error{ErrorCode::InvalidArgument,
                 "a bundle is signed by you: give your certificate and key (--cert/--key, or "
                 "the jobs page's Certificate and Key)"};
  auto cert = readFile(settings.cert_file, "--cert");
  if (!cert.ok()) return cert.error();
  auto key = readFile(settings.key_file, "--key");
  if (!key.ok()) return key.error();
  auto signer = core::SnapshotSigner::fromPem(*cert, *key);
  if (!signer.ok()) return Error{signer.error().code, "--cert/--key: " + signer.error().message};

  std::vector<core::BundleSnapshotInput> inputs;
  inputs.reserve(chosen.nodes.size());
  for (const auto& node : chosen.nodes) {
    if (!node.signed_bytes.empty()) {
      inputs.push_back({node.signed_bytes, node.source});
      continue;
    }
    auto bytes = readFile(node.file, "snapshot");
    if (!bytes.ok()) return bytes.error();
    // The file must still hold the snapshot that was shown (it was checked when opened).
    auto envelope = core::decodeSnapshotFile(*bytes);
    auto snapshot = envelope.ok() ? core::openSnapshot(*envelope)
                                  : Result<::ibcollect::v1::Snapshot>(envelope.error());
    if (snapshot.ok()) keptForm(*snapshot);  // as the job holds it
    if (!snapshot.ok() || core::serializeSnapshot(*snapshot) != node.shown)
      return Error{ErrorCode::Malformed,
                   node.file + " changed since it was opened: open it again (File > Reload)"};
    inputs.push_back({std::move(*bytes), node.file});
  }
  core::BundleExportOptions options;
  options.case_id = settings.case_id;
  options.ibcollect_version = settings.ibcollect_version;
  options.redact = settings.redact;
  std::string pseudonyms;
  if (settings.redact) options.pseudonym_map = &pseudonyms;
  options.created_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  auto members = core::buildBundle(inputs, options, *signer);
  if (!members.ok()) return members.error();
  auto archive = bundle::writeBundleArchive(*members, options.created_unix_ms / 1000);
  if (!archive.ok()) return archive.error();
  os::DiskFileWriter writer;
  if (auto st = writer.writeFileAtomic(out_path, *archive); !st.ok()) return st.error();
  BundleExportResult result{
      out_path, static_cast<int>(inputs.size()), signer->identity().subject, {}};
  if (settings.redact) {
    // The map stays with the engineer: beside the bundle, never in it (docs/formats.md). Core's
    // Redactor wrote it: every host, address and user pseudonym, as `bundle export` writes it.
    const std::string map_path = out_path + ".pseudonyms.tsv";
    if (auto st = writer.writeFileAtomic(map_path, pseudonyms, 0600); !st.ok()) {
      return Error{st.error().code, out_path + " was written, but its pseudonym map " + map_path +
                                        " could not be: " + st.error().message};
    }
    result.pseudonym_map = map_path;
  }
  return result;
}

}  // namespace ibc::console
