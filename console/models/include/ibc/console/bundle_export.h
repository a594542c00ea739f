#pragma once

// The escalate page's "Export bundle..." (console/README.md `escalate`, §8): the escalation bundle
// of the chosen nodes, built by the same library code as `ibcollect bundle export` —
// core::buildBundle (findings, report.md, pf-inspection computed again from the signed
// snapshots, the manifest signed by the engineer) and ibc_bundle's archive writer — so
// `ibcollect bundle verify` accepts what the console writes.
//
// In two steps so that the GUI thread never waits on the files or the signing:
// bundleExportInputs() copies what it needs out of the job (on the GUI thread, which owns the
// job), then writeBundleExport() reads, signs and writes (on a worker: a 2,000-node bundle
// takes ~0.5 s).

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
  // `bundle export --redact`: pseudonyms in findings, report and PF runbook, the signed
  // snapshots left out, and the host pseudonym map written beside the bundle
  // (<out_path>.pseudonyms.tsv, core's Redactor::mapText), never inside.
  bool redact = false;
};

struct BundleExportResult {
  std::string path;
  int snapshots = 0;
  std::string signer;         // subject of the certificate that signed the manifest
  std::string pseudonym_map;  // redacted: the map file written beside the bundle
};

// What one node puts in the bundle, owned (no pointer into the job).
struct BundleExportNode {
  std::string signed_bytes;  // the envelope fetched from the collector; "" for a file
  std::string source;        // where it came from (the bundle's provenance)
  std::string file;          // the opened .ibsnap file when signed_bytes is ""
  std::string shown;         // the serialized snapshot that was shown (file must still hold it)
};
struct BundleExportInputs {
  std::vector<BundleExportNode> nodes;
};

// Copies the chosen nodes (indexes into job.report.nodes()) out of the job. Errors:
// InvalidArgument (no node, an index not in the job), NotFound (a node whose signed bytes
// are neither fetched nor in a file).
core::Result<BundleExportInputs> bundleExportInputs(const JobData& job,
                                                    const std::vector<int>& nodes);

// Writes the bundle to `out_path` (through a temporary file beside it, renamed when
// complete). Each snapshot goes in as its original signed bytes: the fetched envelope, or
// the opened .ibsnap file read again (refused if it no longer holds the snapshot that was
// shown). Errors: InvalidArgument (no certificate or key: they name --cert/--key), NotFound/
// Io (a file), Malformed (a snapshot file that changed), and buildBundle's and the archive
// writer's errors. Touches no Qt object: safe on any thread.
core::Result<BundleExportResult> writeBundleExport(const BundleExportInputs& inputs,
                                                   const BundleExportSettings& settings,
                                                   const std::string& out_path);

}  // namespace ibc::console
