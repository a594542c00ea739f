#include "ibc/core/findings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace ibc::core {

namespace {

constexpr std::array<FindingTraits, 55> kRegistry{{
    {FindingCode::NoRdmaDevices, "NO_RDMA_DEVICES", "port/link", Severity::Critical, 0,
     FindingClass::Device,
     "No RDMA device is visible although the node is expected to have one (driver, VF not "
     "attached).",
     "sysfs was read (this node or a --root tree) and /sys/class/infiniband holds no device, or "
     "pasted ibstat/ibv_devinfo output says there is none: critical when RDMA is expected (RDMA "
     "kernel modules loaded, such tool output given, NCCL looking for IB devices), else a warning. "
     "Also critical for a device that is listed but gone from sysfs.",
     "Check that the HCA/VF is attached (`lspci | grep -i mellanox`), that the drivers are loaded "
     "(`modprobe mlx5_core mlx5_ib ib_uverbs`) and that the kernel log shows no probe failure "
     "(DRIVER_LOAD_FAILED). A device that vanished: look in the kernel log for a reset, device "
     "fatal or PCIe error around that time; for a VF the host must check the PF."},
    {FindingCode::PortDown, "PORT_DOWN", "port/link", Severity::Critical, 0,
     FindingClass::PhysicalLink, "A port is logically DOWN: no link to the switch.",
     "A port whose state reads DOWN (critical; the summary follows its physical state: Polling, "
     "Disabled, ...). Also an IPoIB interface that is down while its IB port is ACTIVE (warning), "
     "and IPoIB interfaces that were never brought up (info).",
     "A Disabled port: enable it (`ibportstate <lid> <port> enable` or `mlxlink -d <pci> -p <port> "
     "-a UP`) and check the switch port. Otherwise `mlxlink -d <pci> -p <port> -m -c -e` shows the "
     "module, the errors and why the link is down; reseat or replace the cable. On a VF or in a VM "
     "the physical port is the provider's: escalate with the snapshot. IPoIB down on an ACTIVE "
     "port: check `ip link`, the interface's pkey and its broadcast group join."},
    {FindingCode::PortNotActiveSm, "PORT_NOT_ACTIVE_SM", "port/link", Severity::Critical, 0,
     FindingClass::FabricSm,
     "A port is physically LinkUp but INIT/ARMED: the subnet manager has not activated it (SM, "
     "partition, VF GUID).",
     "A port in state INIT or ARMED while its physical state is LinkUp (or could not be read); the "
     "evidence adds its LID (0 or 65535: none assigned), the SM's LID and a zero node GUID.",
     "Check that a subnet manager runs on the fabric (`sminfo`), that the port's GUID is a member "
     "of the partition (pkey) the job uses, and the SM log for that GUID. For a VF the host "
     "assigns its node/port GUID and the SM needs virtualization enabled: escalate to the "
     "provider."},
    {FindingCode::PhysLinkNotUp, "PHYS_LINK_NOT_UP", "port/link", Severity::Critical, 0,
     FindingClass::PhysicalLink,
     "The physical link is not up (Polling, Disabled, LinkErrorRecovery): cable, transceiver or "
     "switch port.",
     "A port whose physical state is not LinkUp (Polling, Disabled, Sleep, "
     "PortConfigurationTraining, LinkErrorRecovery) while its logical state could not be read; "
     "with a readable DOWN state the same fault is PORT_DOWN.",
     "A Disabled port: enable it and check the switch port. Otherwise `mlxlink -d <pci> -p <port> "
     "-m -c -e` shows the module, the errors and why the link is down; reseat or replace the "
     "cable. On a VF or in a VM escalate with the snapshot."},
    {FindingCode::LinkRateBelowExpected, "LINK_RATE_BELOW_EXPECTED", "port/link", Severity::Warning,
     0, FindingClass::PhysicalLink,
     "A port trained below the expected rate or below its peers' (a lower-rated cable, a failed "
     "lane, a limited switch port).",
     "An ACTIVE port whose rate is below --expect-rate, below the fastest active port of the same "
     "link layer on the node, or below the speed its IPoIB interface reports; in a job (--job, "
     "compare), below the rate most of the job's active ports share.",
     "`mlxlink -d <pci> -p <port>` shows supported against active speed and width and the peer: a "
     "cable or transceiver rated lower, a failed lane or a speed-limited switch port; replace the "
     "cable if both ends support more. On a VF escalate."},
    {FindingCode::PortStateUnknown, "PORT_STATE_UNKNOWN", "port state", Severity::Warning, 0,
     FindingClass::Observation,
     "A port's state could not be read or means nothing: never a silent OK.",
     "A port state that could not be read or is no port state while the physical link is up or "
     "unknown; a device listed without any port (a paste that ends early); on the physical host "
     "(host-inspect), a PF of which nothing could be read.",
     "Read it again on the node (`cat /sys/class/infiniband/<dev>/ports/<port>/state`, `ibstat "
     "<dev>`) and check the kernel log for driver errors; for a copied tree or a paste, ask for "
     "the complete output; on the host, run host-inspect as root or paste `mlxlink -m -c -e`, "
     "`ethtool -m` and the host kernel log."},
    {FindingCode::PhyErrors, "PHY_ERRORS", "counters", Severity::Warning, 2,
     FindingClass::PhysicalLink,
     "Physical-layer error counters (symbol errors, link error recovery, integrity, receive "
     "errors) are non-zero.",
     "Non-zero physical-layer counters: symbol_error, link_error_recovery, "
     "local_link_integrity_errors, port_rcv_errors, port_rcv_remote_physical_errors, "
     "rx_icrc_encapsulated and ethtool's *_phy error counters (rx_crc_errors_phy, "
     "rx_symbol_err_phy, ...). Critical when one moved during the --window, a warning for an old "
     "total.",
     "Check whether they still grow (`ibcollect snapshot --window 30`); `mlxlink -d <pci> -p "
     "<port> -c -e -m` shows BER, effective errors and module temperature and power; reseat or "
     "replace the cable and check the switch port's counters. On a VF escalate."},
    {FindingCode::LinkDowned, "LINK_DOWNED", "counters", Severity::Warning, 2,
     FindingClass::PhysicalLink, "The link went down and came back (link_downed).",
     "link_downed (IB) or link_down_events_phy (ethtool) is non-zero: critical when it moved "
     "during the window, a warning for an old total.",
     "Correlate with the kernel's link events and NCCL `port error` async events; inspect the "
     "module (`mlxlink -m`) and the switch port's log. On a VF escalate."},
    {FindingCode::BufferOverrun, "BUFFER_OVERRUN", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Excessive buffer overruns: the receiver ran out of buffers (flow control, a misbehaving "
     "peer).",
     "excessive_buffer_overrun_errors, out_of_buffer, rx_out_of_buffer, rx_discards_phy or "
     "in_discards is non-zero: critical when it moved during the window, a warning for an old "
     "total.",
     "The receiver could not drain incoming packets: check the PCIe link's speed and width and "
     "NUMA placement; on RoCE make sure PFC is enabled on the RDMA traffic priority."},
    {FindingCode::XmitDiscards, "XMIT_DISCARDS", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Packets were discarded on transmit (a link down or a congested path).",
     "port_xmit_discards, tx_discards_phy, tx_errors_phy or out_discards is non-zero: critical "
     "when it moved during the window, a warning for an old total.",
     "Correlate with LINK_DOWNED and CONGESTION; check the switch port and the fabric for credit "
     "loops."},
    {FindingCode::Congestion, "CONGESTION", "counters", Severity::Info, 2,
     FindingClass::Observation,
     "The port waited to transmit or saw ECN/CNP marks: a busy fabric does this; it matters when "
     "it moves a lot.",
     "port_xmit_wait, ECN/CNP counters (np_cnp_sent, np_ecn_marked_roce_packets, rp_cnp_handled, "
     "...) or pause frames (rx/tx_pause_ctrl_phy, per-priority pause) are non-zero: info for an "
     "old total, a warning when they moved during the window.",
     "Compare with the job's other nodes (`ibcollect --job`): congestion matters where one node "
     "stands out (NODE_OUTLIER); check adaptive routing and the ECN/PFC configuration."},
    {FindingCode::TransportRetries, "TRANSPORT_RETRIES", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom,
     "Transport retries and timeouts (ACK timeouts, out-of-sequence, RNR NAK, RoCE retransmits).",
     "A transport retry counter is non-zero: local_ack_timeout_err, out_of_sequence, "
     "packet_seq_err, implied_nak_seq_err, rnr_nak_retry_err, duplicate_request, "
     "roce_adp_retrans(_to), roce_slow_restart(_trans), req_transport_retries_exceeded or "
     "req_rnr_retries_exceeded: critical when it moved during the window, a warning for an old "
     "total.",
     "If this port's physical-layer counters are clean, packets were lost beyond it: inspect the "
     "peer, the switch path and, for a VF, the PF (escalate). On RoCE check PFC/ECN for the RDMA "
     "priority."},
    {FindingCode::CqeErrors, "CQE_ERRORS", "counters", Severity::Warning, 2,
     FindingClass::TransportSymptom, "Completions with errors were counted on the device.",
     "req_cqe_error, resp_cqe_error, resp_local_length_error, req_remote_access_errors, "
     "req_remote_invalid_request or resp_remote_access_errors is non-zero (flush errors are listed "
     "beside them as secondary): critical when it moved during the window.",
     "Correlate with the NCCL log's first completion status: 12 (retry exceeded) points to the "
     "fabric or a dead peer, 4 or 10 (protection, access) to memory registration or the "
     "application."},
    {FindingCode::CounterSaturated, "COUNTER_SATURATED", "counters", Severity::Warning, 2,
     FindingClass::Observation,
     "A counter stopped at its width's maximum: its value says nothing more.",
     "A counter at its width's maximum (2^N-1; the legacy 32-bit data counters at 4294967295).",
     "Use the 64-bit counters where present (counters_ext, hw_counters, ethtool) and ask whoever "
     "owns the port to clear its counters (`perfquery -R` on the host)."},
    {FindingCode::CounterUnavailable, "COUNTER_UNAVAILABLE", "counters", Severity::Info, 6,
     FindingClass::Observation,
     "Counters could not be read (no PMA on a VF, permission): the evidence is incomplete.",
     "Counter files or directories that could not be read: info when the device has no such "
     "counter (EINVAL, `N/A`: a VF without a port management agent), a warning when they exist but "
     "could not be read (EACCES, EIO).",
     "A permission or I/O error: re-run as root so the error counters can be judged. A device "
     "without them: read the counters on the PF or the switch (`perfquery`, `mlxlink` on the host) "
     "when a link problem is suspected."},
    {FindingCode::KernelLinkFlap, "KERNEL_LINK_FLAP", "kernel log", Severity::Warning, 1,
     FindingClass::PhysicalLink, "The kernel logged the link going down and up.",
     "Kernel log lines of the link going down or not coming up, a cable unplugged or an RDMA send "
     "failure (warning), or a module error (critical); or a netdev with more than 10 carrier "
     "changes since boot (warning) or whose carrier changed during the window (critical).",
     "Match the link-down times with the job's errors; inspect the cable or module (`mlxlink -m`) "
     "and the switch port's log; for a VF the host must inspect the PF."},
    {FindingCode::FwCommandTimeout, "FW_COMMAND_TIMEOUT", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "A firmware command timed out (mlx5 cmd timeout, command EQ recovery).",
     "Kernel log lines of HCA firmware commands timing out (mlx5 cmd timeout, command EQ "
     "recovery).",
     "Keep the kernel log, then reset the device (driver reload or reboot); if it recurs the "
     "provider must check the firmware and the PF (escalate)."},
    {FindingCode::FwCommandFailed, "FW_COMMAND_FAILED", "kernel log", Severity::Warning, 1,
     FindingClass::Device, "A firmware command failed with a status and syndrome.",
     "Kernel log lines of a firmware command the HCA rejected with a status and syndrome.",
     "Compare the firmware (`fw_ver`) with the driver's supported list and update it; harmless if "
     "the device works and the command is optional."},
    {FindingCode::DeviceFatal, "DEVICE_FATAL", "kernel log", Severity::Critical, 1,
     FindingClass::Device,
     "The device reported a fatal state (health compromised, catastrophic, unrecoverable error).",
     "Kernel log lines of the HCA in a fatal state (health compromised, catastrophic or "
     "unrecoverable error).",
     "The device is unusable until reset: stop the job on this node, reset the device or reboot, "
     "and escalate with the kernel log (firmware crash dump on the PF)."},
    {FindingCode::TxTimeout, "TX_TIMEOUT", "kernel log", Severity::Critical, 1,
     FindingClass::TransportSymptom, "A netdev transmit queue timed out.",
     "Kernel log lines of a netdev transmit queue timeout (the netdev watchdog).",
     "Check for PCIe errors and firmware health; a driver reload or reboot clears it; report "
     "recurrences with the kernel log."},
    {FindingCode::DriverLoadFailed, "DRIVER_LOAD_FAILED", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "The RDMA driver failed to probe or load the device.",
     "Kernel log lines of the RDMA driver failing to probe or initialise the device.",
     "Read the failing step in the evidence (firmware/driver mismatch, resource profile, "
     "capability negotiation); install a supported driver and firmware pair, then reload "
     "(`modprobe -r mlx5_ib mlx5_core && modprobe mlx5_core`)."},
    {FindingCode::PcieError, "PCIE_ERROR", "kernel log", Severity::Critical, 1,
     FindingClass::Device, "PCIe AER errors were logged for the device.",
     "PCIe AER lines for the device in the kernel log (critical when uncorrected or fatal, else a "
     "warning), or the NIC's PCIe signal-integrity counters (rx_pci_signal_integrity, "
     "tx_pci_signal_integrity).",
     "Check `lspci -vvv` error status and reseat the card: corrected errors point to a marginal "
     "slot, riser or seating, uncorrected ones break the device (host side for a VF)."},
    {FindingCode::ModuleTemperature, "MODULE_TEMPERATURE", "kernel log", Severity::Warning, 1,
     FindingClass::PhysicalLink,
     "The cable/transceiver module reported a temperature or power alarm.",
     "Kernel log lines of a cable/transceiver module reporting a high temperature (critical).",
     "Check airflow and the module's temperature (`mlxlink -d <pci> -m`); replace the transceiver "
     "if it keeps overheating (host side for a VF)."},
    {FindingCode::NcclSocketFallback, "NCCL_SOCKET_FALLBACK", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig, "Inter-node NCCL traffic went over NET/Socket instead of IB/RoCE.",
     "An NCCL log in which NCCL chose the Socket network (`Using network Socket`), channels run "
     "`via NET/Socket`, or socket transport shows in an error path; the bootstrap line `NET/Socket "
     ": Using [0]ib0` alone is not. A warning; info for a single-rank run.",
     "NCCL_IB_DISABLE=1 forces sockets: unset it. Otherwise make NCCL find the HCAs (see "
     "NCCL_IB_UNAVAILABLE): check NCCL_IB_HCA, the net plugin and `/dev/infiniband` in the "
     "container."},
    {FindingCode::NcclIbUnavailable, "NCCL_IB_UNAVAILABLE", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL found no usable IB device (libibverbs missing, no device, filtered by NCCL_IB_HCA).",
     "NCCL log lines `NET/IB : No device found`, libibverbs failing to load, or ibv_open_device "
     "failing for some devices.",
     "Make the RDMA devices visible to the job: rdma-core/libibverbs in the image, "
     "`/dev/infiniband` passed into the container, ib_uverbs loaded, the VF attached "
     "(`ibv_devices` lists it). A device NCCL cannot open: compare `ls -l /dev/infiniband` with "
     "`ibv_devices` in the container, or leave it out with NCCL_IB_HCA. `ibcollect snapshot` on "
     "the node shows the device side."},
    {FindingCode::NcclGdrDisabled, "NCCL_GDR_DISABLED", "NCCL log", Severity::Warning, 3,
     FindingClass::TenantConfig,
     "GPUDirect RDMA is disabled (nvidia_peermem missing, NCCL_NET_GDR_LEVEL).",
     "NCCL log lines saying GPUDirect RDMA is disabled.",
     "Load nvidia_peermem (or use a driver and kernel with dma-buf support) and check "
     "NCCL_NET_GDR_LEVEL; see PEERMEM_MISSING in the node's snapshot."},
    {FindingCode::NcclIbCompletionError, "NCCL_IB_COMPLETION_ERROR", "NCCL log", Severity::Critical,
     3, FindingClass::TransportSymptom,
     "NCCL got a work completion error (status 12 retry exceeded, 4 protection; 5 flushed is "
     "secondary).",
     "NCCL log lines of IB work completion errors, per host, decoded from the first one that is "
     "not a flush (status 5); only flushes mean the root error happened elsewhere.",
     "Status 12, 13 or 20 (the peer did not answer): check the link on both ends and whether the "
     "peer process or node died first; if both VF sides are clean, escalate. Status 4, 8 or 10: "
     "memory registration, not the fabric (GPUDirect, versions, memlock). Only flushes: find the "
     "first error in the peer ranks' logs."},
    {FindingCode::NcclIbAsyncEvent, "NCCL_IB_ASYNC_EVENT", "NCCL log", Severity::Critical, 3,
     FindingClass::TransportSymptom,
     "NCCL received an asynchronous IB event (port error, device fatal).",
     "NCCL log lines of asynchronous IB events, per host and device: a port error (the link went "
     "down under NCCL) or a QP or device fatal event.",
     "A port error is a link event: check PHY_ERRORS, LINK_DOWNED, KERNEL_LINK_FLAP and the cable "
     "and switch port (escalate for a VF). A fatal event: check the kernel log for device errors "
     "and the application's use of the QP; report it with the NCCL version."},
    {FindingCode::NcclRegMrFailed, "NCCL_REG_MR_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL could not register memory (memlock limit, GPUDirect, IOMMU).",
     "NCCL log lines of a failed memory registration.",
     "Check the locked-memory limit the job really gets (MEMLOCK_LIMIT: `ulimit -l unlimited`), "
     "GPUDirect support (nvidia_peermem, dma-buf) and NIC resources (ENOMEM)."},
    {FindingCode::NcclConnectFailed, "NCCL_CONNECT_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TenantConfig,
     "NCCL bootstrap or socket connections failed (interface selection, firewall, a dead peer).",
     "NCCL log lines of failed bootstrap or socket connections, or connections the peer closed.",
     "Often a consequence: a peer process crashed or was killed first, so find the first failing "
     "rank's log. Otherwise check connectivity on the socket interface (NCCL_SOCKET_IFNAME) and "
     "firewalls between the nodes."},
    {FindingCode::NcclQpSetupFailed, "NCCL_QP_SETUP_FAILED", "NCCL log", Severity::Critical, 3,
     FindingClass::TransportSymptom, "NCCL could not bring a queue pair up (GID index, MTU, path).",
     "NCCL log lines of a queue pair that could not be set up (connection timed out moving to RTR, "
     "network unreachable).",
     "On RoCE check the GID index (NCCL_IB_GID_INDEX must select a RoCE v2 GID with a routable IP "
     "on both ends), routing and MTU; on IB check that the SM gives a path (same partition). "
     "Rail-optimised fabrics may need NCCL_CROSS_NIC=0."},
    {FindingCode::NcclCollectiveTimeout, "NCCL_COLLECTIVE_TIMEOUT", "NCCL log", Severity::Critical,
     3, FindingClass::Application,
     "A collective did not finish (PyTorch watchdog or heartbeat monitor).",
     "PyTorch watchdog or heartbeat monitor lines in an NCCL log: a collective timed out.",
     "The ranks missing from the timeout reports, or those behind (NCCL_RANK_LAGGING), are where "
     "the job is stuck: collect their logs and run `ibcollect --job` to compare the nodes; an "
     "earlier NCCL error in the log is the cause."},
    {FindingCode::NcclRankLagging, "NCCL_RANK_LAGGING", "NCCL log", Severity::Warning, 3,
     FindingClass::Application,
     "Ranks stopped at different collectives: the ones behind are named.",
     "Ranks of one NCCL log stopped at different opCounts (or PyTorch SeqNums), or NCCL's RAS "
     "report (2.24+, `ncclras`) lists a MISMATCH of ranks at different operation counts of one "
     "collective (its unnamed groups counted, \"30 ranks\"; the ranks it names keep the node "
     "address RAS gives): a warning, critical beside a collective timeout. RAS samples counts "
     "that keep moving: the evidence says that a one-operation spread can be the sampling and "
     "that the same ranks behind in reports 10 s apart are stragglers.",
     "Inspect the nodes of the ranks at the lowest opCount or SeqNum (`ibcollect --job` compares "
     "all nodes) for link errors, a dead process or a slow GPU."},
    {FindingCode::NcclTestWrongResults, "NCCL_TEST_WRONG_RESULTS", "nccl-tests", Severity::Critical,
     3, FindingClass::Application, "nccl-tests reported wrong results (#wrong > 0).",
     "nccl-tests rows with #wrong > 0 or an error over threshold, or failed out-of-bounds values.",
     "Take the node out of service until explained: rerun with NCCL_ALGO/NCCL_PROTO varied to "
     "isolate the path, check GPU memory errors (`nvidia-smi -q -d ECC`) and the links' "
     "PHY_ERRORS."},
    {FindingCode::NcclTestLowBusbw, "NCCL_TEST_LOW_BUSBW", "nccl-tests", Severity::Warning, 3,
     FindingClass::Observation, "nccl-tests bus bandwidth is far below what the links can carry.",
     "The nccl-tests peak bus bandwidth is below --expect-busbw; else below half of another run of "
     "the same test on the same hosts; else, in a multi-node run, below half of what the node's "
     "active RDMA ports carry (their rates summed, / 8).",
     "Check the transport in the NCCL log (NCCL_SOCKET_FALLBACK, NCCL_GDR_DISABLED), link rates "
     "(LINK_RATE_BELOW_EXPECTED), PCIe (PCIE_LINK_DEGRADED) and congestion; compare the nodes with "
     "`ibcollect --job` to find a slow one."},
    {FindingCode::MemlockLimit, "MEMLOCK_LIMIT", "host", Severity::Warning, 5,
     FindingClass::TenantConfig, "The locked-memory limit is too low for RDMA.",
     "The collecting process's RLIMIT_MEMLOCK soft limit is not unlimited on a node with an RDMA "
     "device: a warning, critical when NCCL also reported memory registration failures.",
     "Run jobs with `ulimit -l unlimited`: `* - memlock unlimited` under "
     "`/etc/security/limits.d/`, for Slurm PropagateResourceLimitsExcept=MEMLOCK (or "
     "LimitMEMLOCK=infinity in slurmd's unit), for containers `--ulimit memlock=-1`."},
    {FindingCode::UverbsAccess, "UVERBS_ACCESS", "host", Severity::Critical, 5,
     FindingClass::TenantConfig, "/dev/infiniband/uverbs* is missing or not accessible.",
     "RDMA devices exist but `/dev/infiniband` is missing, holds no uverbs device, or a uverbs "
     "device is not readable and writable by this user.",
     "Load ib_uverbs, give the job read and write access to `/dev/infiniband/uverbs*` (rdma-core's "
     "udev rules set 0666; check local overrides) and in containers pass the devices "
     "(`--device=/dev/infiniband` or the RDMA device plugin)."},
    {FindingCode::PeermemMissing, "PEERMEM_MISSING", "host", Severity::Warning, 5,
     FindingClass::TenantConfig, "nvidia_peermem is not loaded: no GPUDirect RDMA.",
     "The nvidia GPU driver is loaded, neither nvidia_peermem nor nv_peer_mem is, and no NCCL log "
     "shows GPUDirect RDMA in use.",
     "`modprobe nvidia_peermem` (and add it to the image's modules to load); check the NCCL log "
     "for `GPU Direct RDMA Enabled` or `DMABUF`."},
    {FindingCode::PcieLinkDegraded, "PCIE_LINK_DEGRADED", "host", Severity::Warning, 1,
     FindingClass::Device, "The device's PCIe link runs below its capability (width or speed).",
     "The device's PCIe link runs slower or narrower than its maximum (current_link_speed and "
     "current_link_width against max_link_*) on a device whose PF is local, or the kernel logged "
     "that its PCIe bandwidth is limited (the only evidence trusted on a VF or in a VM).",
     "Reseat the card or riser, or move it to a slot with the full width and generation; check the "
     "BIOS slot settings (host side for a VF)."},
    {FindingCode::MtuMismatch, "MTU_MISMATCH", "across nodes", Severity::Warning, 4,
     FindingClass::TenantConfig, "Nodes of the job use different MTUs.",
     "In a job (--job, compare): a node's IPoIB or RoCE netdev MTU, or an IB port's active_mtu, "
     "differs from the value most of the job's interfaces share.",
     "Set the same MTU on every node's interface (and on the switch for RoCE, where a mismatch "
     "drops or fragments large messages)."},
    {FindingCode::FwVersionMismatch, "FW_VERSION_MISMATCH", "across nodes", Severity::Warning, 4,
     FindingClass::Device, "A device's firmware differs from the rest of the job.",
     "In a job: a device's firmware differs from the majority of the same model in the job "
     "(warning), or its fw_ver is not a version while its peers' are (info).",
     "Bring every device of the model to the same firmware (`flint -d <pci> q`); on VFs the "
     "provider updates the PF."},
    {FindingCode::NodeOutlier, "NODE_OUTLIER", "across nodes", Severity::Warning, 4,
     FindingClass::Observation,
     "A node's value (counter delta, throughput, busbw, layout) differs from its peers'.",
     "In a job: a node with fewer active RDMA ports than its peers, counter deltas far above the "
     "median node's (critical; a warning for congestion), much less RDMA data moved than the "
     "median node, an nccl-tests bus bandwidth far from the median, or device names mapped to PCI "
     "functions otherwise than on its peers.",
     "This node, or the switch port next to it, is the likely culprit: read its own link, PCIe, "
     "GDR and congestion findings and rerun nccl-tests on pairs to isolate a link; on a VF "
     "escalate with its snapshot. Device names that moved: reload the driver or reboot, or select "
     "HCAs by PCI address."},
    {FindingCode::EscalateHostInspection, "ESCALATE_HOST_INSPECTION", "escalation",
     Severity::Warning, 6, FindingClass::Escalation,
     "The provider must inspect the PF behind a VF; the reasons and the runbook follow the fault's "
     "class.",
     "Raised per device whose PF is the provider's (a VF, or an RDMA device in a VM) from the "
     "node's warning or critical findings (an IPoIB-only PORT_DOWN does not count): a physical "
     "link or device finding, a port the SM has not activated, or transport symptoms while the VF "
     "side is clean (no physical or device evidence, no unknown port state). NCCL symptoms pinned "
     "to no device escalate the node's devices together. Its reasons name the codes that made it.",
     "Send the snapshot (.ibsnap) to the provider with the ticket and follow the runbook in the "
     "finding's action: physical (PF, cable, switch port: mlxlink, flint, AER), subnet manager "
     "(the VF's GUIDs on the PF, SR-IOV policy, SM virtualization, pkey) or transport path (the "
     "PF's and switch's counters, the path to the peers). On the host `ibcollect host-inspect "
     "--bundle` finds the PF."},
    {FindingCode::PfNotFound, "PF_NOT_FOUND", "host side (PF)", Severity::Critical, 0,
     FindingClass::HostSide, "No PF on this host hosts the VF (the identities compared are named).",
     "host-inspect: no PF on this host hosts the VF whose identities (node/port GUID, MAC) were "
     "looked for; the identities compared are listed.",
     "This is not the VM's host, or the VF was re-created since the snapshot: find the host from "
     "the VM id (product_uuid) in the hypervisor and run host-inspect there."},
    {FindingCode::PfPortDown, "PF_PORT_DOWN", "host side (PF)", Severity::Critical, 0,
     FindingClass::HostSide, "The PF's port is down.",
     "host-inspect: a PF port whose state is not ACTIVE, mlxlink showing the link not Active or "
     "not LinkUp, a PF netdev that is up without carrier, or the host forcing the VF down "
     "(`link-state disable`).",
     "Check the cable and the switch port (`mlxlink -d <pci> -m -c`), then the subnet manager for "
     "INIT or ARMED; a VF forced down: set its link state to auto if it should be up."},
    {FindingCode::PfPhyErrors, "PF_PHY_ERRORS", "host side (PF)", Severity::Warning, 2,
     FindingClass::HostSide, "The PF shows physical-layer errors (symbol, FEC, BER).",
     "host-inspect: mlxlink effective errors, an effective BER of 1e-12 or more (critical), a raw "
     "BER above 1e-6, link error recovery, symbol errors or a status opcode with an issue; or "
     "non-zero physical-error counters in the PF's sysfs counters or `ethtool -S`.",
     "Clear the counters (`mlxlink -d <pci> --pc`) and watch whether they rise; if so replace the "
     "cable or module, then check the switch port."},
    {FindingCode::PfLinkFlap, "PF_LINK_FLAP", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide,
     "The PF's link went down and up (link_down_events_phy, host kernel log).",
     "host-inspect: mlxlink's link down counter, the PF port's link_downed, or link-down lines in "
     "the host kernel log (critical from two).",
     "Each link-down drops every VF's queue pairs: match the times with the host kernel log and "
     "the switch log, check the cable and module (`mlxlink -m -c`), replace the cable if it keeps "
     "happening."},
    {FindingCode::PfModule, "PF_MODULE", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide,
     "The PF's cable/transceiver module reports temperature, power or fault alarms.",
     "host-inspect: module faults, a high temperature or low or no Rx power from `mlxlink -m` or "
     "`ethtool -m` (alarms critical, warnings a warning), or module and cable events in the host "
     "kernel log.",
     "Reseat, then replace the module or cable named in the evidence; low Rx power: clean or "
     "replace the fibre and check the peer's Tx; high temperature: airflow."},
    {FindingCode::PfPcieErrors, "PF_PCIE_ERRORS", "host side (PF)", Severity::Warning, 1,
     FindingClass::HostSide, "The PF shows PCIe AER errors or a degraded PCIe link.",
     "host-inspect: non-zero AER counters (fatal ones critical), a PCIe link below its maximum, "
     "lspci AER status bits, functions whose configuration space reads all ones (critical), or "
     "PCIe errors in the host kernel log.",
     "Check the slot, riser and BIOS PCIe settings (`lspci -vvv -s <pci>`); functions that read "
     "all ones need a device reset or a host reboot, and the adapter replaced if it recurs."},
    {FindingCode::PfFw, "PF_FW", "host side (PF)", Severity::Critical, 1, FindingClass::HostSide,
     "The PF's firmware reports a health problem or syndrome.",
     "host-inspect: firmware health syndromes, a fatal device state, firmware command timeouts or "
     "failures, or driver load failures in the host kernel log.",
     "Collect the evidence first (`devlink health show`, mstdump, firmware trace), check the "
     "firmware version against the release notes and open a vendor case; a health syndrome usually "
     "needs a firmware reset or a host reboot."},
    {FindingCode::PfClean, "PF_CLEAN", "host side (PF)", Severity::Info, 6, FindingClass::HostSide,
     "The PF side shows nothing: look beyond it (switch port, peer).",
     "host-inspect: PF-side evidence was read (the finding lists what) and none of it shows a "
     "warning or a critical problem.",
     "Look beyond the PF: the switch port and its peer (switch counters, UFM), the cable's far "
     "end, and the case's VF-side evidence."},
    {FindingCode::VfIdentityMissing, "VF_IDENTITY_MISSING", "escalation", Severity::Warning, 6,
     FindingClass::Escalation,
     "A suspect VF has no readable node/port GUID, MAC or VM id: the host cannot find it; ask the "
     "customer for one.",
     "Beside ESCALATE_HOST_INSPECTION: an escalated device with no usable node/port GUID, netdev "
     "MAC or VM id; in host-inspect, a VF whose only identity is a guest PCI address (nothing was "
     "compared).",
     "Ask the customer for one of: `cat /sys/class/infiniband/<dev>/node_guid` (as root), `ibstat "
     "<dev>` (Port GUID), the MAC in `ip link`, or the VM's instance id (`cat "
     "/sys/class/dmi/id/product_uuid` as root); then run `ibcollect host-inspect --vf <GUID|MAC>` "
     "on the host."},
    {FindingCode::PfUnknown, "PF_UNKNOWN", "host side (PF)", Severity::Warning, 6,
     FindingClass::HostSide, "The PF was found but its evidence could not be read: never PF_CLEAN.",
     "No rule raises it yet: host-inspect reports a PF of which nothing could be read as "
     "PORT_STATE_UNKNOWN. The code is reserved so that such a PF is never PF_CLEAN.",
     "Run `ibcollect host-inspect` as root on the host itself, or paste `mlxlink -m -c -e`, "
     "`ethtool -m` and the host kernel log with --paste."},
    {FindingCode::RdmaTestLowBw, "RDMA_TEST_LOW_BW", "active checks", Severity::Warning, 3,
     FindingClass::PhysicalLink,
     "An RDMA bandwidth test (perftest) measured under 80 % of the port's rate.",
     "A perftest bandwidth run (ib_write_bw, ib_read_bw, ib_send_bw; a pasted output or its "
     "--out_json file) whose best average, at messages of 64 KiB or more, is under 80 % of the "
     "rate of the port it ran on (twice that for -b), converted by perftest's own units (MB/sec "
     "is MiB/s, Gb/sec is 10^9 bit/s). The rate is the port's, else the one rate the node's "
     "active ports share, else --expect-rate; with none, a notice says the run was not judged.",
     "A pair test is as fast as its slower end and the path between them: run it between each "
     "end and a third, healthy node to tell which; check the ports' rates "
     "(LINK_RATE_BELOW_EXPECTED), error counters and PCIe (PCIE_LINK_DEGRADED); with --use_cuda, "
     "compare with a run in host memory."},
    {FindingCode::RdmaTestFailed, "RDMA_TEST_FAILED", "active checks", Severity::Warning, 4,
     FindingClass::Observation,
     "An RDMA test (perftest) could not connect or run: it measured nothing.",
     "A perftest run that printed no result but perftest's own errors: \"Couldn't connect to\", "
     "\"Unable to find the Infiniband/RoCE device\", \"Failed to modify QP ... to RTR\", "
     "\"Completion with error\" (with its status). The finding quotes them, the ends it names and "
     "what the error usually means.",
     "Read the quoted error: a refused connection is the server side not listening (start it "
     "first, same -p) or a firewall on TCP 18515; no device is a container or VM without the "
     "RDMA device (NO_RDMA_DEVICES); a QP that does not reach RTR is a wrong or empty RoCE GID "
     "(-x with the RoCE v2 GID of the interface's address: show_gids) or a remote port down; a "
     "completion error's status says which (4: memory registration, with --use_cuda "
     "nvidia_peermem or dma-buf; 12: retries exceeded on the path)."},
}};

// One row per code, in the enum's order: findingTraits(code) is an index.
constexpr bool registryInEnumOrder() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i) {
    if (static_cast<std::size_t>(kRegistry[i].code) != i) return false;
  }
  return true;
}
static_assert(registryInEnumOrder(), "kRegistry rows must follow FindingCode's order");
static_assert(kRegistry.size() == static_cast<std::size_t>(FindingCode::RdmaTestFailed) + 1,
              "every FindingCode needs a row in kRegistry");

}  // namespace

std::string_view severityName(Severity severity) {
  switch (severity) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Critical: return "critical";
  }
  return "info";
}

std::optional<Severity> severityFromName(std::string_view name) {
  if (name == "info") return Severity::Info;
  if (name == "warning") return Severity::Warning;
  if (name == "critical") return Severity::Critical;
  return std::nullopt;
}

std::string_view findingClassName(FindingClass finding_class) {
  switch (finding_class) {
    case FindingClass::PhysicalLink: return "physical_link";
    case FindingClass::FabricSm: return "fabric_sm";
    case FindingClass::Device: return "device";
    case FindingClass::TransportSymptom: return "transport_symptom";
    case FindingClass::TenantConfig: return "tenant_config";
    case FindingClass::Application: return "application";
    case FindingClass::Observation: return "observation";
    case FindingClass::Escalation: return "escalation";
    case FindingClass::HostSide: return "host_side";
  }
  return "observation";
}

const std::vector<FindingTraits>& findingRegistry() {
  static const std::vector<FindingTraits> all(kRegistry.begin(), kRegistry.end());
  return all;
}

const FindingTraits& findingTraits(FindingCode code) {
  return kRegistry[static_cast<std::size_t>(code)];
}

const FindingTraits* findingTraits(std::string_view name) {
  static const std::unordered_map<std::string_view, const FindingTraits*> by_name = [] {
    std::unordered_map<std::string_view, const FindingTraits*> m;
    for (const auto& t : kRegistry) m.emplace(t.name, &t);
    return m;
  }();
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

std::string_view findingCodeName(FindingCode code) { return findingTraits(code).name; }

std::optional<FindingCode> findingCodeFromName(std::string_view name) {
  if (const auto* t = findingTraits(name)) return t->code;
  return std::nullopt;
}

const std::vector<FindingCode>& allFindingCodes() {
  static const std::vector<FindingCode> all = [] {
    std::vector<FindingCode> v;
    for (const auto& t : kRegistry) v.push_back(t.code);
    return v;
  }();
  return all;
}

int findingSpecificity(std::string_view code) {
  const auto* t = findingTraits(code);
  return t != nullptr ? t->specificity : 5;
}

FindingClass findingClassOf(std::string_view code) {
  const auto* t = findingTraits(code);
  return t != nullptr ? t->finding_class : FindingClass::Observation;
}

::ibcollect::v1::Finding makeFinding(FindingSpec spec) {
  ::ibcollect::v1::Finding f;
  f.set_code(std::string(findingCodeName(spec.code)));
  f.set_severity(std::string(severityName(spec.severity)));
  f.set_node(std::move(spec.node));
  f.set_device(std::move(spec.device));
  f.set_port(spec.port);
  f.set_summary(std::move(spec.summary));
  for (auto& e : spec.evidence) f.add_evidence(std::move(e));
  f.set_action(std::move(spec.action));
  f.set_scope("node");
  return f;
}

Severity severityOf(const ::ibcollect::v1::Finding& finding) {
  return severityFromName(finding.severity()).value_or(Severity::Info);
}

std::optional<Severity> worstSeverity(const std::vector<::ibcollect::v1::Finding>& findings) {
  std::optional<Severity> worst;
  for (const auto& f : findings) {
    const Severity s = severityOf(f);
    if (!worst || s > *worst) worst = s;
  }
  return worst;
}

int exitCodeFor(const std::vector<::ibcollect::v1::Finding>& findings) {
  const auto worst = worstSeverity(findings);
  if (!worst || *worst == Severity::Info) return kExitOk;
  return *worst == Severity::Critical ? kExitCritical : kExitWarnings;
}

void sortFindings(std::vector<::ibcollect::v1::Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const auto& a, const auto& b) {
    const int sa = static_cast<int>(severityOf(a));
    const int sb = static_cast<int>(severityOf(b));
    // ESCALATE_HOST_INSPECTION summarises others of the same node: keep it after them.
    const bool ea = findingClassOf(a.code()) == FindingClass::Escalation;
    const bool eb = findingClassOf(b.code()) == FindingClass::Escalation;
    const bool ja = a.scope() == "job";
    const bool jb = b.scope() == "job";
    return std::make_tuple(-sa, ja, a.node(), ea, a.device(), a.port(), a.code()) <
           std::make_tuple(-sb, jb, b.node(), eb, b.device(), b.port(), b.code());
  });
}

namespace {

std::string replaceAll(std::string s, const std::string& what, const std::string& with) {
  if (what.empty()) return s;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + with.size()))
    s.replace(p, what.size(), with);
  return s;
}

}  // namespace

std::string findingGroupKey(const ::ibcollect::v1::Finding& f) {
  std::string summary = f.summary();
  std::string action = f.action();
  if (f.port() != 0) {
    const std::string port = "port " + std::to_string(f.port());
    summary = replaceAll(summary, port, "port #");
    action = replaceAll(action, port, "port #");
  }
  summary = replaceAll(replaceAll(summary, f.device(), "{device}"), f.node(), "{node}");
  action = replaceAll(replaceAll(action, f.device(), "{device}"), f.node(), "{node}");
  std::string key = f.code() + '\0' + f.severity() + '\0' + summary + '\0' + action;
  // An escalation for other reasons asks for something else.
  for (const auto& r : f.reasons()) key += '\0' + r;
  return key;
}

std::string summaryWithoutPlace(const ::ibcollect::v1::Finding& f) {
  if (f.device().empty()) return f.summary();
  for (const std::string& lead :
       {f.device() + " port " + std::to_string(f.port()) + ": ", f.device() + ": "}) {
    if (f.summary().rfind(lead, 0) == 0) {
      std::string rest = f.summary().substr(lead.size());
      if (!rest.empty())
        rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
      return rest;
    }
  }
  // "mlx5_0 port 1 runs at ...": the port, not that one.
  for (const auto& [lead, noun] :
       {std::pair<std::string, const char*>{f.device() + " port " + std::to_string(f.port()) + " ",
                                            "The port "},
        {f.device() + " ", "The device "}}) {
    if (f.summary().rfind(lead, 0) == 0 && f.summary().size() > lead.size())
      return noun + f.summary().substr(lead.size());
  }
  return f.summary();
}

}  // namespace ibc::core
