// The host-inspect report (pf_report.cpp): the VF table (where each VF looked for lives, its
// PF's link and verdict), the report body below it, and the JSON document.

#include "ibc/core/pf_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "ibc/core/pf_judge.h"

using ::testing::HasSubstr;
using ::testing::Not;

namespace ibc::core {
namespace {

namespace v1 = ::ibcollect::v1;

// A host with one PF (mlx5_0, mlxlink says Active at 100G) hosting VF 3 of node1, a second
// VF no PF hosts, and one warning on the PF.
v1::HostInspection inspection() {
  v1::HostInspection in;
  in.set_host("pfhost");
  in.set_root("/");
  auto* found = in.add_vf_map();
  found->set_node("node1");
  found->set_device("mlx5_2");
  found->set_vf_pci("0000:42:00.3");
  found->set_pf_device("mlx5_0");
  found->set_pf_pci("0000:42:00.0");
  found->set_vf_index(3);
  found->set_matched_by("node_guid");
  auto* missing = in.add_vf_map();
  missing->set_node("node2");
  missing->set_device("mlx5_3");
  missing->set_vf_index(-1);
  auto* pf = in.add_pf();
  pf->set_pf_device("mlx5_0");
  auto* ml = pf->add_mlxlink();
  ml->set_state("Active");
  ml->set_speed("100G");
  auto* f = in.add_findings();
  f->set_code("PF_PHY_ERRORS");
  f->set_severity("warning");
  f->set_node("pfhost");
  f->set_device("mlx5_0");
  f->set_summary("Effective physical errors on mlx5_0 since the last clear");
  finishHostInspection(in);
  return in;
}

TEST(HostInspectionText, EachVfRowSaysWhereItLivesItsPfLinkAndItsVerdict) {
  const std::string text = renderHostInspectionText(inspection(), {});
  EXPECT_EQ(text.rfind("host pfhost\n", 0), 0u) << text;
  EXPECT_THAT(text, HasSubstr("NODE   VF      VF PCI        PF      PF PCI        VF#  MATCHED BY  "
                              "PF LINK      VERDICT\n"));
  EXPECT_THAT(text, HasSubstr("node1  mlx5_2  0000:42:00.3  mlx5_0  0000:42:00.0  3    node_guid  "
                              " Active 100G  WARNING\n"));
  EXPECT_THAT(text, HasSubstr("node2  mlx5_3  -             -       -             -    -          "
                              " -            NOT FOUND\n"));
  EXPECT_THAT(text, HasSubstr("PF_PHY_ERRORS"));
}

TEST(HostInspectionText, ATreeIsNamedAndAColumnEmptyOnEveryRowIsLeftOutWhenFitted) {
  auto in = inspection();
  in.set_root("/cases/42/tree");
  in.mutable_vf_map(0)->clear_node();
  in.mutable_vf_map(1)->clear_node();
  TextOptions fitted;
  fitted.width = 200;
  const std::string text = renderHostInspectionText(in, fitted);
  EXPECT_EQ(text.rfind("host pfhost (tree /cases/42/tree)\n", 0), 0u) << text;
  EXPECT_THAT(text, HasSubstr("\nVF      VF PCI"));
  EXPECT_THAT(renderHostInspectionText(in, {}), HasSubstr("\nNODE  VF"));
}

TEST(HostInspectionText, OnlyTheVerdictIsColouredAndNotFoundIsNot) {
  TextOptions color;
  color.color = true;
  const std::string text = renderHostInspectionText(inspection(), color);
  EXPECT_THAT(text, HasSubstr("\x1b["));
  EXPECT_THAT(text, Not(HasSubstr("\x1b[0mNOT FOUND")));
  EXPECT_THAT(text, HasSubstr("NOT FOUND"));
}

TEST(HostInspectionJson, IsTheWholeInspectionAsOneDocument) {
  const std::string json = renderHostInspectionJson(inspection());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.back(), '\n');
  EXPECT_THAT(json, HasSubstr("\"vf_map\""));
  EXPECT_THAT(json, HasSubstr("\"matched_by\": \"node_guid\""));
  EXPECT_THAT(json, HasSubstr("\"PF_PHY_ERRORS\""));
  EXPECT_THAT(json, HasSubstr("\"host\": \"pfhost\""));
}

}  // namespace
}  // namespace ibc::core
