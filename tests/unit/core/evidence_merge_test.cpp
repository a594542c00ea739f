// The one evidence merge (issue 10): nothing dropped, conflicts with both values, netdevs
// of different devices kept apart.

#include "ibc/core/evidence_merge.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

v1::Snapshot parse(const std::string& text) {
  v1::Snapshot s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

TEST(EvidenceMerge, WhatOneSourceLacksIsTakenAndConflictsKeepBothValues) {
  auto into = parse(R"pb(
    devices {
      name: "mlx5_0"
      ports {
        port: 1
        state { code: 4 name: "ACTIVE" raw: "4: ACTIVE" }
      }
    }
    netdevs { name: "ib0" rdma_device: "mlx5_0" rdma_port: 1 }
  )pb");
  const auto from = parse(R"pb(
    devices {
      name: "mlx5_0"
      pci { address: "0000:0c:00.0" }
      ports {
        port: 1
        state { code: 1 name: "DOWN" raw: "1: DOWN" }
        lid: 7
        pkeys: "0xffff"
        speed_name: "HDR"
      }
    }
    netdevs { name: "ib0" rdma_device: "mlx5_0" carrier_changes: 98 }
    netdevs { name: "ib0" rdma_device: "mlx5_1" mtu: 4092 }
  )pb");
  const auto conflicts = mergeEvidence(into, from);
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].where, "devices[mlx5_0].ports[1].state");
  EXPECT_EQ(conflicts[0].kept, "4: ACTIVE");
  EXPECT_EQ(conflicts[0].other, "1: DOWN");
  EXPECT_EQ(describeConflict(conflicts[0], "node.ibsnap", "paste.txt"),
            "devices[mlx5_0].ports[1].state: '4: ACTIVE' (node.ibsnap, kept) vs '1: DOWN' "
            "(paste.txt)");
  const auto& port = into.devices(0).ports(0);
  EXPECT_EQ(port.state().raw(), "4: ACTIVE");
  EXPECT_EQ(port.lid(), 7u);
  ASSERT_EQ(port.pkeys_size(), 1);
  EXPECT_EQ(port.speed_name(), "HDR");
  EXPECT_EQ(into.devices(0).pci().address(), "0000:0c:00.0");
  ASSERT_EQ(into.netdevs_size(), 2) << "ib0 of mlx5_1 is another interface";
  EXPECT_EQ(into.netdevs(0).carrier_changes(), 98u);
  EXPECT_EQ(into.netdevs(1).rdma_device(), "mlx5_1");
}

TEST(EvidenceMerge, TheSameStateSpelledTwoWaysIsNoConflict) {
  auto into = parse(R"pb(devices {
                           name: "d"
                           ports {
                             port: 1
                             state { code: 4 raw: "4: ACTIVE" }
                           }
                         })pb");
  const auto from = parse(R"pb(devices {
                                 name: "d"
                                 ports {
                                   port: 1
                                   state { code: -1 name: "Active" raw: "Active" }
                                 }
                               })pb");
  EXPECT_TRUE(mergeEvidence(into, from).empty());
}

}  // namespace
}  // namespace ibc::core
