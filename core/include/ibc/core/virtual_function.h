#pragma once

// Whether an RDMA device is an SR-IOV virtual function, from whatever evidence of it was
// read: the PCI function's own mark (physfn link, PCI device id) or the HCA type any tool
// printed (sysfs hca_type, ibstat "CA type: MT4124"). One table
// (mellanoxVirtualFunctionName) for every source, so a VF is escalated the same way
// (DESIGN §5) whether it came from a node, a copied tree or a paste.

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {

// Sets dev.is_virtual_function (and its evidence) when dev.pci() is marked a VF or
// dev.hca_type() names a known VF device id; leaves an existing mark alone.
void classifyVirtualFunction(ibcollect::v1::RdmaDevice& dev);

}  // namespace ibc::core
