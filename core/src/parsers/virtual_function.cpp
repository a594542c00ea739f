#include "ibc/core/virtual_function.h"

#include <string>

#include "ibc/core/sysfs_values.h"

namespace ibc::core {

void classifyVirtualFunction(ibcollect::v1::RdmaDevice& dev) {
  if (dev.is_virtual_function()) return;
  if (dev.pci().is_virtual_function()) {
    dev.set_is_virtual_function(true);
    dev.set_virtual_function_evidence(dev.pci().virtual_function_evidence());
    return;
  }
  const std::string id = hcaTypeToDeviceId(dev.hca_type());
  if (auto name = mellanoxVirtualFunctionName(id); !name.empty()) {
    dev.set_is_virtual_function(true);
    dev.set_virtual_function_evidence("hca_type " + dev.hca_type() + " = PCI device " + id +
                                      ", a " + std::string(name));
  }
}

}  // namespace ibc::core
