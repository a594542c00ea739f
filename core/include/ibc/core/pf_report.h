#pragma once

// The host-inspect report (`ibcollect host-inspect`, docs/formats.md) in text and JSON, from
// a HostInspection that pf_judge.h judged and finished (finishHostInspection). Pure: no I/O.

#include <string>

#include "ibc/core/report.h"
#include "ibcollect/v1/host.pb.h"

namespace ibc::core {

// Text: "host H (tree DIR)" when the inspection names a host or tree, then the VF table (NODE,
// VF, VF PCI, PF, PF PCI, VF#, MATCHED BY, PF LINK, VERDICT; one row per VF looked for)
// fitted to options.width, a column that is "-" on every row left out when a width is given;
// then notices, counts and findings as renderText prints them. A VF's verdict is the worst
// severity above info of the findings on its PF ("OK" when none), "NOT FOUND" when no PF
// hosts it; its PF LINK is the first mlxlink state (and speed) of its PF, else the PF's first
// RDMA port state and rate.
std::string renderHostInspectionText(const ::ibcollect::v1::HostInspection& inspection,
                                     const TextOptions& options);

// JSON: the whole HostInspection ({"nodes","findings","notices","vf_map","pf",...}) in the
// proto JSON mapping (json.h), one document and a newline.
std::string renderHostInspectionJson(const ::ibcollect::v1::HostInspection& inspection);

}  // namespace ibc::core
