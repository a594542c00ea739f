#pragma once

// The escalate page's "Export bundle..." (DESIGN §7 `escalate`, §8): the escalation bundle of
// the chosen nodes, built by the same library code as `ibcollect bundle export` —
// core::buildBundle (findings, report.md, pf-inspection computed again from the signed
// snapshots, the manifest signed by the engineer) and ibc_bundle's archive writer — so
// `ibcollect bundle verify` accepts what the console writes. Blocking file I/O: callers on
// the GUI thread export a handful of suspect nodes, not a whole 2,000-node job.

#include <string>
#include <vector>

#include "ibc/console/job_data.h"
#include "ibc/core/result.h"

namespace ibc::console {

struct BundleExportSettings {
  std::string cert_file;  // the engineer's certificate (PEM): signs manifest.json
  std::string key_file;   // its Ed25519 private key (PEM)
  std::string case_id;    // may be empty
  std::string ibcollect_version;
};

struct BundleExportResult {
  std::string path;
  int snapshots = 0;
  std::string signer;  // subject of the certificate that signed the manifest
};

// Writes the bundle of `nodes` (indexes into job.report.nodes()) to `out_path` (through a
// temporary file beside it, renamed when complete). Each snapshot goes in as its original
// signed bytes: the envelope fetched from the collector, or the opened .ibsnap file read
// again (refused if it no longer holds the snapshot that was shown). Errors: InvalidArgument
// (no node, no certificate or key: they name --cert/--key), NotFound/Io (a file), Malformed
// (a snapshot file that changed), and buildBundle's and the archive writer's errors.
core::Result<BundleExportResult> exportBundle(const JobData& job, const std::vector<int>& nodes,
                                              const BundleExportSettings& settings,
                                              const std::string& out_path);

}  // namespace ibc::console
