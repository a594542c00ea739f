// Host facts the agent reads (host_facts.cpp) over SYNTHETIC text in the kernel's formats:
// /proc/modules lines ("name size refcount deps state address"), DMI strings, cpuinfo flags
// and a library directory's file names.

#include "ibc/core/host_facts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ibc::core {
namespace {

TEST(RdmaRelevantModules, KeepsRdmaAndGpuDirectModulesInProcModulesOrder) {
  const std::string proc_modules =
      "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
      "mlx5_ib 466944 0 - Live 0x0000000000000000\n"
      "ib_uverbs 163840 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000\n"
      "ext4 933888 1 - Live 0x0000000000000000\n"
      "mlx5_core 2088960 1 mlx5_ib, Live 0x0000000000000000\n"
      "nvidia 56569856 1 nvidia_peermem, Live 0x0000000000000000 (POE)\n"
      "ib_core 434176 2 mlx5_ib,ib_uverbs, Live 0x0000000000000000\n";
  EXPECT_EQ(rdmaRelevantModules(proc_modules),
            (std::vector<std::string>{"nvidia_peermem", "mlx5_ib", "ib_uverbs", "mlx5_core",
                                      "nvidia", "ib_core"}));
}

TEST(RdmaRelevantModules, EmptyGarbageAndLookAlikeNamesGiveNothing) {
  EXPECT_TRUE(rdmaRelevantModules("").empty());
  EXPECT_TRUE(rdmaRelevantModules("\x01\x02 garbage\n\n   \n").empty());
  EXPECT_TRUE(
      rdmaRelevantModules("mlx5_ib_extra 1 0 - Live 0x0\nnvidia_drm 1 0 - Live 0x0\n").empty());
}

TEST(VirtualMachineDmi, CloudAndHypervisorVendorsOrProductsAreVirtualMachines) {
  EXPECT_TRUE(isVirtualMachineDmi("QEMU", "Standard PC (Q35 + ICH9, 2009)"));
  EXPECT_TRUE(isVirtualMachineDmi("Amazon EC2", "p4d.24xlarge"));
  EXPECT_TRUE(isVirtualMachineDmi("Microsoft Corporation", "Virtual Machine"));
  EXPECT_TRUE(isVirtualMachineDmi("Google", "Google Compute Engine"));
  EXPECT_TRUE(isVirtualMachineDmi("OpenStack Foundation", "OpenStack Nova"));
  EXPECT_TRUE(isVirtualMachineDmi("innotek GmbH", "VirtualBox"));
}

TEST(VirtualMachineDmi, BareMetalServersAreNot) {
  EXPECT_FALSE(isVirtualMachineDmi("Supermicro", "SYS-4029GP-TRT"));
  EXPECT_FALSE(isVirtualMachineDmi("NVIDIA", "DGXH100"));
  EXPECT_FALSE(isVirtualMachineDmi("", ""));
}

TEST(HypervisorFlag, OnlyAFlagsLineListingHypervisorCounts) {
  EXPECT_TRUE(
      cpuinfoHasHypervisorFlag("processor\t: 0\nflags\t\t: fpu vme de hypervisor lahf_lm\n"));
  EXPECT_FALSE(cpuinfoHasHypervisorFlag("processor\t: 0\nflags\t\t: fpu vme de pse tsc msr\n"));
  EXPECT_FALSE(cpuinfoHasHypervisorFlag("model name\t: hypervisor-ready CPU\nflags\t: fpu\n"));
  EXPECT_FALSE(cpuinfoHasHypervisorFlag(""));
}

TEST(RdmaCoreVersion, IsReadFromLibibverbsFileNameAndEmptyWithoutIt) {
  EXPECT_EQ(rdmaCoreVersionFromLibraries(
                {"libc.so.6", "libibverbs.so.1", "libibverbs.so.1.14.44.0", "libmlx5.so.1"}),
            "44.0");
  EXPECT_EQ(rdmaCoreVersionFromLibraries({"libibverbs.so.1", "libibverbs.so.1.14"}), "");
  EXPECT_EQ(rdmaCoreVersionFromLibraries({}), "");
}

}  // namespace
}  // namespace ibc::core
