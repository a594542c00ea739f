// Port and link rules: NO_RDMA_DEVICES, PORT_DOWN, PORT_NOT_ACTIVE_SM, PHYS_LINK_NOT_UP,
// LINK_RATE_BELOW_EXPECTED.

#include <algorithm>
#include <map>

#include "ibc/core/sysfs_values.h"
#include "ibc/core/text.h"
#include "rules_internal.h"

namespace ibc::core::rules {

namespace {

std::string portLabel(const v1::RdmaDevice& dev, const v1::RdmaPort& port) {
  return dev.name() + " port " + std::to_string(port.port());
}

std::string stateText(const v1::EnumValue& v) {
  if (!v.raw().empty()) return "\"" + v.raw() + "\"";
  if (!v.name().empty()) return v.name();
  return "unknown";
}

void addPortContext(const RuleContext& ctx, const v1::RdmaDevice& dev, const v1::RdmaPort& port,
                    std::vector<std::string>& ev) {
  if (!port.link_layer().empty()) ev.push_back("link_layer " + port.link_layer());
  if (!port.rate_raw().empty()) ev.push_back("rate \"" + port.rate_raw() + "\"");
  if (const auto* nd = ctx.netdevFor(dev.name(), port.port())) {
    std::string s = "netdev " + nd->name();
    if (!nd->operstate().empty()) s += " operstate " + nd->operstate();
    if (nd->has_carrier()) s += std::string(" carrier ") + (nd->carrier() ? "1" : "0");
    if (nd->has_carrier_changes()) s += " carrier_changes " + std::to_string(nd->carrier_changes());
    ev.push_back(s);
  }
}

std::string whereToAct(const RuleContext& ctx, const v1::RdmaDevice& dev) {
  if (dev.is_virtual_function()) {
    return " This is a virtual function: only the provider can act on the physical port — "
           "escalate with this snapshot (see ESCALATE_HOST_INSPECTION).";
  }
  if (physicalFunctionIsRemote(ctx.snap, dev)) {
    return " This machine is a virtual machine, so the physical port is most likely the "
           "provider's: escalate with this snapshot (see ESCALATE_HOST_INSPECTION).";
  }
  return "";
}

// Rules that expect RDMA devices look for a reason: drivers loaded, a tool that found
// none, NCCL trying IB, a RoCE-capable netdev. Without any, a node without RDMA devices
// may simply not be an RDMA node.
// Strong signs make a missing device critical; weak ones (an interface that could carry
// RDMA) only a warning.
std::vector<std::string> signsRdmaExpected(const v1::Snapshot& snap,
                                           std::vector<std::string>& weak) {
  std::vector<std::string> signs;
  for (const auto& m : snap.host().modules()) {
    if (m == "mlx5_ib" || m == "mlx4_ib" || m == "ib_core" || m == "ib_uverbs" ||
        m == "mlx5_core" || m == "irdma" || m == "bnxt_re" || m == "efa") {
      signs.push_back("kernel module " + m + " is loaded");
    }
  }
  for (const auto& t : snap.tool_outputs()) {
    for (const auto& k : t.kinds()) {
      if (k == "ibstat" || k == "ibstatus" || k == "ibv_devinfo") {
        signs.push_back(k + " output was given (" + t.source() + ")");
      }
    }
  }
  for (const auto& n : snap.netdevs()) {
    if (n.has_ecn()) weak.push_back("netdev " + n.name() + " has RoCE congestion control (ecn/)");
    if (n.type() == 32) weak.push_back("netdev " + n.name() + " is an IPoIB interface");
  }
  for (const auto& log : snap.nccl_logs()) {
    for (const auto& e : log.parsed().events()) {
      if (e.kind() == v1::NcclEvent::IB_NO_DEVICE) {
        signs.push_back("NCCL looked for IB devices: " + e.text());
        break;
      }
    }
  }
  return signs;
}

void noRdmaDevices(RuleContext& ctx) {
  bool any_present = false;
  for (const auto& d : ctx.snap.devices()) {
    if (!d.missing_reason().empty()) {
      ctx.add({FindingCode::NoRdmaDevices,
               Severity::Critical,
               "",
               d.name(),
               0,
               "RDMA device " + d.name() + " is listed but absent from sysfs (it disappeared)",
               {d.missing_reason()},
               "The HCA/VF dropped off: check the kernel log for a device fatal/reset or PCIe "
               "error around the time it vanished, then reload the driver or reboot; if it is a VF "
               "the host side must check the PF (escalate)."});
    } else {
      any_present = true;
    }
  }
  if (any_present) return;
  // Only judge absence when sysfs was actually read, or a tool said there are none.
  bool tool_said_none = false;
  std::vector<std::string> ev;
  for (const auto& t : ctx.snap.tool_outputs()) {
    if (!t.reported_no_rdma_devices()) continue;
    tool_said_none = true;
    for (const auto& e : t.tool_errors()) ev.push_back(t.source() + ": " + e);
  }
  const bool sysfs_read = ctx.snap.node().source() != "pasted" && !ctx.snap.node().source().empty();
  if (!sysfs_read && !tool_said_none) return;
  if (ctx.snap.devices_size() > 0) return;  // only missing ones, already reported
  if (sysfs_read)
    ev.push_back("/sys/class/infiniband has no devices (source " + ctx.snap.node().source() + ")");
  std::vector<std::string> weak;
  auto signs = signsRdmaExpected(ctx.snap, weak);
  const Severity sev = (tool_said_none || !signs.empty()) ? Severity::Critical : Severity::Warning;
  for (auto& s : signs) ev.push_back(std::move(s));
  for (auto& s : weak) ev.push_back(std::move(s));
  ctx.add({FindingCode::NoRdmaDevices, sev, "", "", 0, "No RDMA device is registered on this node",
           std::move(ev),
           "Check that the HCA/VF is attached to the VM (lspci | grep -i mellanox), that the "
           "drivers are loaded (modprobe mlx5_core mlx5_ib ib_uverbs) and that the kernel log has "
           "no probe failure (see DRIVER_LOAD_FAILED); without a device NCCL falls back to "
           "sockets."});
}

// What a physical state other than LinkUp means, in words.
std::string physMeaning(PhysState p) {
  switch (p) {
    case PhysState::Polling:
      return "no link partner answers (Polling): cable unplugged or faulty, or the switch port "
             "is down";
    case PhysState::Disabled:
      return "the port is disabled (administratively, by ibportstate/mlxlink, or by the peer)";
    case PhysState::Sleep: return "the port is asleep (powered down)";
    case PhysState::PortConfigurationTraining:
      return "link training does not complete: cable/transceiver or speed mismatch";
    case PhysState::LinkErrorRecovery:
      return "the link is recovering from errors: marginal cable or transceiver";
    default: return "the physical link is not up";
  }
}

// The next step for a port whose link is down: enable a disabled port, else inspect the link.
std::string downAction(const RuleContext& ctx, const v1::RdmaDevice& dev, const v1::RdmaPort& port,
                       PhysState p) {
  const std::string n = std::to_string(port.port());
  if (p == PhysState::LinkUp && dev.is_virtual_function()) {
    // The cable is fine (the physical link is up): the VF's own port is held down by the
    // host's VF link policy or was never brought up by the SM.
    return "Not a cable fault: the physical link is up and this VF's port is held down on the "
           "host side. The provider checks the VF's link policy on the PF (`cat "
           "/sys/class/infiniband/<pf>/device/sriov/<N>/policy` must be Follow or Up; `ip link "
           "set <pf> vf <N> state auto`), the VF's node/port GUID assignment, and that the "
           "subnet manager has virtualization enabled and sees the VF's GUID (`sminfo`, the SM "
           "log)." +
           whereToAct(ctx, dev);
  }
  if (p == PhysState::LinkUp) {
    return "The physical link is up but the port is logically down: read the state again "
           "(`ibstat " +
           dev.name() + " " + n +
           "`; a port coming up passes through Down), then check the subnet manager (`sminfo`) and "
           "the kernel log for this device." +
           whereToAct(ctx, dev);
  }
  if (p == PhysState::Disabled) {
    return "Enable the port (`ibportstate <lid> " + n + " enable`, or `mlxlink -d <pci> -p " + n +
           " -a UP`) and check that the switch port is not disabled; only if it stays down, "
           "inspect the cable (`mlxlink -d <pci> -p " +
           n + " -m -c`)." + whereToAct(ctx, dev);
  }
  return "Check cable, transceiver and the switch port: `mlxlink -d <pci> -p " + n +
         " -m -c -e` shows the module, the errors and why the link is down; reseat or replace the "
         "cable." +
         whereToAct(ctx, dev);
}

// A device listed with no port (a paste that ends before its port section, `ibv_devices`
// alone): whether its link is up was never seen, which is not OK.
void portlessDevice(RuleContext& ctx, const v1::RdmaDevice& dev) {
  ctx.add({FindingCode::PortStateUnknown,
           Severity::Warning,
           "",
           dev.name(),
           0,
           dev.name() + ": no port of it was read" +
               (dev.seen_in().empty() ? std::string() : " (" + dev.seen_in() + ")") +
               ": whether its link is usable is unknown",
           {"device " + dev.name() + " listed without a port section"},
           "Read the ports on the node (`ibstat " + dev.name() + "`, `cat /sys/class/infiniband/" +
               dev.name() + "/ports/*/state`); for a paste, ask for the complete output."});
}

// An IPoIB interface down while its IB port is ACTIVE: the IB port works, the IP layer on it
// does not (multicast join / pkey / admin state).
void ipoibDownOnActivePort(RuleContext& ctx, const v1::RdmaDevice& dev, const v1::RdmaPort& port,
                           const std::vector<std::string>& ev) {
  const auto* nd = ctx.netdevFor(dev.name(), port.port());
  if (nd == nullptr || nd->operstate() != "down" || nd->type() != 32 ||
      (nd->has_admin_up() && !nd->admin_up()))
    return;
  ctx.add(
      {FindingCode::PortDown, Severity::Warning, "", dev.name(), port.port(),
       "IPoIB interface " + nd->name() + " is down while " + portLabel(dev, port) + " is ACTIVE",
       ev,
       "IP over IB is down (NCCL bootstrap or storage using " + nd->name() +
           " fails): check `ip link show " + nd->name() +
           "`, that the interface's pkey exists in the SM's partition and the IPoIB "
           "broadcast group join (`dmesg | grep " +
           nd->name() + "`)."});
}

void portStates(RuleContext& ctx) {
  for (const auto& dev : ctx.snap.devices()) {
    if (!dev.missing_reason().empty()) continue;
    if (dev.ports_size() == 0) {
      portlessDevice(ctx, dev);
      continue;
    }
    for (const auto& port : dev.ports()) {
      const PortState s = portStateOf(port.state());
      const PhysState p = physStateOf(port.phys_state());
      std::vector<std::string> ev{"state " + stateText(port.state()),
                                  "phys_state " + stateText(port.phys_state())};
      addPortContext(ctx, dev, port, ev);
      const std::string where = portLabel(dev, port);

      // A state that was read (or should have been: the collector marks a missing file)
      // but means nothing: whether the link is up is unknown, so the node is not healthy.
      // Ports from pastes without a state (perfquery, ethtool) have no state at all; a
      // physical state other than LinkUp already gives PHYS_LINK_NOT_UP below.
      if (s == PortState::Unknown && port.has_state() &&
          (p == PhysState::LinkUp || p == PhysState::Unknown)) {
        ctx.add({FindingCode::PortStateUnknown, Severity::Warning, "", dev.name(), port.port(),
                 where + ": the port state " +
                     (port.state().raw().empty()
                          ? std::string("could not be read")
                          : "reads " + stateText(port.state()) + ", which is not a port state") +
                     ": whether the link is usable is unknown",
                 ev,
                 "Read it again on the node (`cat /sys/class/infiniband/" + dev.name() + "/ports/" +
                     std::to_string(port.port()) + "/state`, `ibstat " + dev.name() +
                     "`) and check the kernel log for driver errors; for a copied tree or a "
                     "paste, ask for the complete output."});
      }
      // A port that is down is one fault: one critical whose cause and next step follow its
      // physical state (a Disabled port is enabled, not recabled). PHYS_LINK_NOT_UP is for a
      // link known down whose logical state could not be read.
      const bool phys_down = p != PhysState::Unknown && p != PhysState::LinkUp;
      if (s == PortState::Down) {
        ctx.add({FindingCode::PortDown, Severity::Critical, "", dev.name(), port.port(),
                 where + " is DOWN: " +
                     (phys_down ? physMeaning(p)
                      : p == PhysState::LinkUp
                          ? std::string("logically, although its physical link is up")
                          : std::string("no physical link")),
                 ev, downAction(ctx, dev, port, p)});
      }
      if (phys_down && s == PortState::Unknown) {
        ctx.add(
            {FindingCode::PhysLinkNotUp, Severity::Critical, "", dev.name(), port.port(),
             where + " physical state is " + std::string(physStateName(p)) + ": " + physMeaning(p),
             ev, downAction(ctx, dev, port, p)});
      }
      if ((s == PortState::Init || s == PortState::Armed) &&
          (p == PhysState::LinkUp || p == PhysState::Unknown)) {
        std::vector<std::string> ev2 = ev;
        if (port.has_lid()) {
          const uint32_t lid = port.lid();
          ev2.push_back("lid " + std::to_string(lid) +
                        ((lid == 0 || lid == 65535) ? " (no LID assigned by the SM)" : ""));
        }
        if (port.has_sm_lid()) ev2.push_back("sm_lid " + std::to_string(port.sm_lid()));
        const bool zero_guid = !dev.node_guid().empty() && isZeroGuid(dev.node_guid());
        if (zero_guid) ev2.push_back("node_guid " + dev.node_guid() + " (no GUID assigned)");
        const bool phys_known = p == PhysState::LinkUp;
        std::string action =
            std::string(phys_known ? "The link is physically up but the subnet manager has not "
                                     "activated the port. "
                                   : "The physical state could not be read; if the link is up, "
                                     "the subnet manager has not activated the port. ") +
            "Check "
            "that an SM runs on this fabric (`sminfo`), that the port's GUID is a member of the "
            "partition (pkey) the job uses, and the SM log for this GUID.";
        if (zero_guid || dev.is_virtual_function()) {
          action +=
              " For a VF the host must assign the VF's node/port GUID (`ip link set <pf> vf N "
              "node_guid ... port_guid ...`) and the SM must have virtualization enabled: escalate "
              "to the provider.";
        }
        ctx.add({FindingCode::PortNotActiveSm, Severity::Critical, "", dev.name(), port.port(),
                 where + " is " + std::string(portStateName(s)) +
                     (phys_known ? " while the physical link is up: the subnet manager has not "
                                   "activated it"
                                 : " and its physical state is unknown: most likely the subnet "
                                   "manager has not activated it"),
                 std::move(ev2), std::move(action)});
      }
      if (s == PortState::Active) ipoibDownOnActivePort(ctx, dev, port, ev);
    }
  }
}

// IPoIB/RoCE netdevs not bound to any RDMA port we know (e.g. `ip link` pastes).
void unboundNetdevs(RuleContext& ctx) {
  std::vector<std::string> admin_down;
  for (const auto& nd : ctx.snap.netdevs()) {
    if (!nd.rdma_device().empty() && ctx.device(nd.rdma_device()) != nullptr) continue;
    if (nd.type() != 32) continue;
    if (nd.has_admin_up() && !nd.admin_up()) {
      admin_down.push_back(nd.name() + (nd.qdisc().empty() ? "" : " (qdisc " + nd.qdisc() + ")") +
                           (nd.operstate().empty() ? "" : " state " + nd.operstate()));
    }
  }
  if (admin_down.empty()) return;
  ctx.add({FindingCode::PortDown, Severity::Info, "", "", 0,
           "IPoIB interfaces are administratively down (never brought up, no carrier loss)",
           admin_down,
           "Nothing is broken at the link level: these interfaces were not configured up. Bring "
           "them up (`ip link set <if> up` / the network config) only if IP over IB is needed "
           "(e.g. NCCL_SOCKET_IFNAME or storage)."});
}

void linkRates(RuleContext& ctx) {
  // Highest active rate per link layer on this node: a port below its siblings trained
  // down (cable, lane failure) even when no expected rate was given.
  std::map<std::string, double> best;
  std::map<std::string, std::string> best_where;
  for (const auto& dev : ctx.snap.devices()) {
    for (const auto& port : dev.ports()) {
      if (portStateOf(port.state()) != PortState::Active || port.rate_gbps() <= 0) continue;
      double& b = best[port.link_layer()];
      if (port.rate_gbps() > b) {
        b = port.rate_gbps();
        best_where[port.link_layer()] = portLabel(dev, port) + " (\"" + port.rate_raw() + "\")";
      }
    }
  }
  for (const auto& dev : ctx.snap.devices()) {
    for (const auto& port : dev.ports()) {
      if (portStateOf(port.state()) != PortState::Active || port.rate_gbps() <= 0) continue;
      const double rate = port.rate_gbps();
      std::vector<std::string> ev{"rate \"" + port.rate_raw() + "\" = " + num(rate) + " Gb/s"};
      std::string expected;
      if (ctx.opts.expect_rate_gbps && rate + 1e-6 < *ctx.opts.expect_rate_gbps) {
        expected = num(*ctx.opts.expect_rate_gbps) + " Gb/s (--expect-rate)";
      } else if (!ctx.opts.expect_rate_gbps) {
        const double b = best[port.link_layer()];
        if (rate + 1e-6 < b) {
          expected = num(b) + " Gb/s like " + best_where[port.link_layer()];
        } else if (const auto* nd = ctx.netdevFor(dev.name(), port.port());
                   nd != nullptr && nd->type() == 32 && nd->has_speed_mbps() &&
                   static_cast<double>(nd->speed_mbps()) > rate * 1000.0 * 1.01) {
          expected = num(static_cast<double>(nd->speed_mbps()) / 1000.0) +
                     " Gb/s that IPoIB interface " + nd->name() + " reports (speed " +
                     std::to_string(nd->speed_mbps()) + " Mb/s)";
        }
      }
      if (expected.empty()) continue;
      ev.push_back("expected " + expected);
      if (port.width_lanes() > 0) ev.push_back("width " + std::to_string(port.width_lanes()) + "X");
      ctx.add(
          {FindingCode::LinkRateBelowExpected, Severity::Warning, "", dev.name(), port.port(),
           portLabel(dev, port) + " runs at " + num(rate) + " Gb/s, below the expected " + expected,
           std::move(ev),
           "The link trained below its expected speed/width: a cable or transceiver rated "
           "lower, a failed lane, or a speed-limited switch port. `mlxlink -d <pci> -p " +
               std::to_string(port.port()) +
               "` shows supported vs. active speed and width and the peer; replace the cable "
               "if both ends support more." +
               whereToAct(ctx, dev)});
    }
  }
}

}  // namespace

void runLinkRules(RuleContext& ctx) {
  noRdmaDevices(ctx);
  portStates(ctx);
  unboundNetdevs(ctx);
  linkRates(ctx);
}

}  // namespace ibc::core::rules
