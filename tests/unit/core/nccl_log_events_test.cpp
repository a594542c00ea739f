// What each NCCL line means (nccl_log_events.cpp): transports, configuration, communicators,
// progress, WARN messages, framework errors and error chains, on synthetic lines and the real
// captures of tests/fixtures/real/nccl-logs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fixtures.h"
#include "ibc/core/nccl_log.h"
#include "ibc/core/text.h"
#include "nccl_log_fixtures.h"

namespace ibc::core {
namespace {

using namespace ibc::test;  // the NCCL log fixtures and what a summary made of them
using Kind = v1::NcclEvent::Kind;

struct VersionCase {
  std::string name;
  std::string text;
  std::string version;
};

class NcclVersionLines : public ::testing::TestWithParam<VersionCase> {};

struct TransportCase {
  std::string name;
  std::string line;
  std::string transport;
  bool gdr;
};

class NcclTransportNames : public ::testing::TestWithParam<TransportCase> {};

struct WarnCase {
  std::string name;
  std::string warn;  // message after "NCCL WARN "
  Kind kind;
  int status;
  std::string rdma_device;
};

class NcclWarnClassification : public ::testing::TestWithParam<WarnCase> {};

struct ChainCase {
  std::string name;
  std::string text;
  Kind kind;
  std::string op;
};

class NcclErrorChains : public ::testing::TestWithParam<ChainCase> {};

TEST_P(NcclVersionLines, VersionIsReadWithOrWithoutPrefix) {
  EXPECT_EQ(parseNcclLog(GetParam().text).nccl_version(), GetParam().version);
}

INSTANTIATE_TEST_SUITE_P(
    Versions, NcclVersionLines,
    ::testing::Values(
        VersionCase{"Bare", "NCCL version 2.7.8+cuda10.2\n", "2.7.8+cuda10.2"},
        VersionCase{"AsInfo", "node-1:77:77 [0] NCCL INFO NCCL version 2.23.4+cuda12.1\n",
                    "2.23.4+cuda12.1"},
        VersionCase{"Pdsh", "node-1: NCCL version 2.19.3+cuda12.3\n", "2.19.3+cuda12.3"},
        VersionCase{"Mpirun", "[1,0]<stdout>:NCCL version 2.21.5+cuda12.4\n", "2.21.5+cuda12.4"},
        VersionCase{"EmbeddedInFrameworkError",
                    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system "
                    "error, NCCL version 2.14.3\n",
                    "2.14.3"},
        VersionCase{"FirstWins", "NCCL version 2.4.7+cuda9.2\nNCCL version 2.7.8+cuda10.2\n",
                    "2.4.7+cuda9.2"},
        VersionCase{"NoVersion", "node-1:77:77 [0] NCCL INFO Using network IB\n", ""}),
    [](const auto& p) { return p.param.name; });

TEST_P(NcclTransportNames, ChannelLineCountsForItsTransport) {
  const auto s = parseNcclLog(GetParam().line);
  ASSERT_EQ(s.transports_size(), 1) << GetParam().line;
  EXPECT_EQ(s.transports(0).transport(), GetParam().transport);
  EXPECT_EQ(s.transports(0).channel_lines(), 1u);
  EXPECT_EQ(s.transports(0).gdr(), GetParam().gdr);
}

// Synthetic channel lines in the format of NCCL's transport setup INFO ("Channel %02d/%d :
// %d[%d] -> %d[%d] [send] via NET/%s/%d%s"), old 2.4 "Ring %02d : %d -> %d [send] via ...".
INSTANTIATE_TEST_SUITE_P(
    Transports, NcclTransportNames,
    ::testing::Values(
        TransportCase{"NetIbGdr",
                      "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
                      "NET/IB", true},
        TransportCase{"NetIbPlugin",
                      "h:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via "
                      "NET/IBext_v8/0/GDRDMA",
                      "NET/IBext_v8", true},
        TransportCase{"NetSocket", "h:1:2 [0] NCCL INFO Ring 00 : 35 -> 34 [send] via NET/Socket/0",
                      "NET/Socket", false},
        TransportCase{"OfiPluginNameWithSpace",
                      "h:1:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/AWS "
                      "Libfabric/0/GDRDMA",
                      "NET/AWS Libfabric", true},
        TransportCase{"P2p", "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
                      "P2P", false},
        TransportCase{"Shm", "h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
                      "SHM", false}),
    [](const auto& p) { return p.param.name; });

TEST(NcclLogParser, BootstrapSocketLineIsNotAFallback) {
  // Synthetic IB run whose bootstrap interface list is printed by NET/Socket.
  const auto s = parseNcclLog(
      "gpu1:10:10 [0] NCCL INFO NET/Socket : Using [0]ib0:10.1.0.1<0>\n"
      "gpu1:10:20 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.0.1<0>\n"
      "gpu1:10:20 [0] NCCL INFO Using network IB\n"
      "gpu1:10:20 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n");
  EXPECT_EQ(toVector(s.socket_interfaces()), std::vector<std::string>{"ib0:10.1.0.1"});
  EXPECT_EQ(toVector(s.ib_devices()), std::vector<std::string>{"mlx5_0:1/IB"});
  EXPECT_EQ(s.network(), "IB");
  EXPECT_EQ(transport(s, "NET/Socket"), nullptr);
  ASSERT_NE(transport(s, "NET/IB"), nullptr);
  EXPECT_EQ(countKind(s, v1::NcclEvent::SOCKET_TRANSPORT), 0);
  EXPECT_EQ(s.events_size(), 0);
}

TEST(NcclLogParser, CollOpCountsMapToRanksThroughInitCompleteLines) {
  // Synthetic NCCL_DEBUG_SUBSYS=INIT,COLL output following init.cc ("ncclCommInitRank comm
  // %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init COMPLETE") and
  // enqueue.cc ("%s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d
  // comm %p [nranks=%d] stream %p"). Rank 3 is three collectives behind.
  const std::string text =
      "hostA:100:100 [0] NCCL INFO ncclCommInitRank comm 0x55d0c0 rank 0 nranks 4 cudaDev 0 "
      "nvmlDev 0 busId 1b000 commId 0x8a412f - Init COMPLETE\n"
      "hostA:101:101 [1] NCCL INFO ncclCommInitRank comm 0x55d1c0 rank 1 nranks 4 cudaDev 1 "
      "nvmlDev 1 busId 2b000 commId 0x8a412f - Init COMPLETE\n"
      "hostB:200:200 [0] NCCL INFO ncclCommInitRank comm 0x66a0c0 rank 2 nranks 4 cudaDev 0 "
      "nvmlDev 0 busId 1b000 commId 0x8a412f - Init COMPLETE\n"
      "hostB:201:201 [1] NCCL INFO ncclCommInitRank comm 0x66a1c0 rank 3 nranks 4 cudaDev 1 "
      "nvmlDev 1 busId 2b000 commId 0x8a412f - Init COMPLETE\n"
      "hostB:201:201 [1] NCCL INFO ncclCommSplit comm 0x77b1c0 rank 1 nranks 2 cudaDev 1 "
      "nvmlDev 1 busId 2b000 parent 0x66a1c0 color 1 key 1 commId 0x1 - Init COMPLETE\n"
      "hostA:100:100 [0] NCCL INFO AllReduce: opCount 29 sendbuff 0x7f0000 recvbuff 0x7f0000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x55d0c0 [nranks=4] stream 0x5600\n"
      "hostA:100:100 [0] NCCL INFO AllReduce: opCount 2a sendbuff 0x7f0000 recvbuff 0x7f0000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x55d0c0 [nranks=4] stream 0x5600\n"
      "hostA:101:101 [1] NCCL INFO AllReduce: opCount 2a sendbuff 0x7f1000 recvbuff 0x7f1000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x55d1c0 [nranks=4] stream 0x5700\n"
      "hostB:200:200 [0] NCCL INFO AllReduce: opCount 2a sendbuff 0x7f2000 recvbuff 0x7f2000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x66a0c0 [nranks=4] stream 0x5800\n"
      "hostB:201:201 [1] NCCL INFO AllReduce: opCount 27 sendbuff 0x7f3000 recvbuff 0x7f3000 "
      "count 1048576 datatype 7 op 0 root 0 comm 0x66a1c0 [nranks=4] stream 0x5900\n"
      "hostB:201:201 [1] NCCL INFO Broadcast: opCount 5 sendbuff 0x7f4000 recvbuff 0x7f4000 "
      "count 16 datatype 7 op 0 root 0 comm 0x77b1c0 [nranks=2] stream 0x5900\n";
  const auto s = parseNcclLog(text);
  EXPECT_EQ(s.nranks(), 4);
  ASSERT_EQ(s.ranks_size(), 4);  // the 2-rank split communicator is not reported
  const std::vector<std::pair<std::string, uint64_t>> want = {
      {"hostA", 0x2a}, {"hostA", 0x2a}, {"hostB", 0x2a}, {"hostB", 0x27}};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(s.ranks(r).rank(), r);
    EXPECT_EQ(s.ranks(r).host(), want[static_cast<std::size_t>(r)].first);
    EXPECT_EQ(s.ranks(r).op_count(), want[static_cast<std::size_t>(r)].second) << "rank " << r;
    EXPECT_EQ(s.ranks(r).sequence(), v1::NcclRankProgress::NCCL_OP_COUNT);
  }
  EXPECT_EQ(s.ranks(3).line_number(), 10u);
}

TEST(NcclLogParser, EventRankComesFromTheSameProcessAndDevice) {
  // Synthetic: the communicator line and a later completion error of the same host:pid:dev.
  const auto s = parseNcclLog(
      "h1:7:7 [2] NCCL INFO comm 0x1234 rank 10 nranks 16 cudaDev 2 nvmlDev 2 - Init COMPLETE\n"
      "h1:7:9 [2] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.9<1234> with error 5, opcode 0, len 0, vendor err 249 (Recv)\n"
      "h1:8:9 [3] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.9<1235> with error 5, opcode 0, len 0, vendor err 249 (Recv)\n");
  ASSERT_EQ(s.events_size(), 2);
  EXPECT_EQ(s.events(0).rank(), 10);
  EXPECT_EQ(s.events(0).status(), 5);
  EXPECT_EQ(s.events(1).rank(), -1);  // another process: unknown
  EXPECT_EQ(s.nranks(), 16);
}

TEST(NcclLogParser, OldCompletionErrorFormatWithoutPeer) {
  // The 2.x net_ib.cc format quoted in the title of NVIDIA/nccl issue 707.
  const auto s = parseNcclLog(
      "node2:120890:121560 [0] transport/net_ib.cc:818 NCCL WARN NET/IB : Got completion with "
      "error 4, opcode 8983, len 0, vendor err 81\n");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_COMPLETION_ERROR});
  EXPECT_EQ(s.events(0).status(), 4);
  EXPECT_EQ(s.events(0).vendor_err(), 81);
  EXPECT_EQ(s.events(0).peer(), "");
  EXPECT_EQ(s.events(0).opcode_or_op(), "8983");
}

TEST_P(NcclWarnClassification, WarnMessageMapsToEventKind) {
  const auto& c = GetParam();
  const auto s = parseNcclLog("gpu7:1:2 [0] misc/file.cc:1 NCCL WARN " + c.warn + "\n");
  ASSERT_EQ(s.events_size(), 1) << c.warn;
  EXPECT_EQ(ncclEventKindName(s.events(0).kind()), ncclEventKindName(c.kind)) << c.warn;
  EXPECT_EQ(s.events(0).status(), c.status);
  EXPECT_EQ(s.events(0).rdma_device(), c.rdma_device);
}

// Synthetic WARN texts following the NCCL/ibvwrap/aws-ofi-nccl format strings quoted in the
// issue titles and sources named in tests/fixtures/real/nccl-logs/PROVENANCE.md.
INSTANTIATE_TEST_SUITE_P(
    Warns, NcclWarnClassification,
    ::testing::Values(
        WarnCase{"ModifyQpOldFormat",
                 "Call to ibv_modify_qp failed with error Network is unreachable",
                 v1::NcclEvent::QP_SETUP_FAILED, 101, ""},
        WarnCase{"CreateQp", "Call to ibv_create_qp failed with 12 Cannot allocate memory",
                 v1::NcclEvent::QP_SETUP_FAILED, 12, ""},
        WarnCase{"RegMr", "Call to ibv_reg_mr failed with error Cannot allocate memory",
                 v1::NcclEvent::REG_MR_FAILED, 12, ""},
        WarnCase{"RegDmabufMr", "Call to ibv_reg_dmabuf_mr failed with error Bad address errno 14",
                 v1::NcclEvent::REG_MR_FAILED, 14, ""},
        WarnCase{"AsyncPortErrorWithDevice", "NET/IB : mlx5_3:1 Got async event : port error",
                 v1::NcclEvent::IB_ASYNC_EVENT, -1, "mlx5_3:1"},
        WarnCase{"ConnectRefused", "Call to connect returned Connection refused, retrying",
                 v1::NcclEvent::CONNECT_FAILED, 111, ""},
        WarnCase{"BootstrapTimeout", "Bootstrap : connection to 10.0.0.1<4000> timed out",
                 v1::NcclEvent::CONNECT_FAILED, -1, ""},
        WarnCase{"Libibverbs", "Failed to open libibverbs.so[.1]", v1::NcclEvent::IBVERBS_MISSING,
                 -1, ""},
        WarnCase{"CudaFailure", "Cuda failure 'out of memory'", v1::NcclEvent::NCCL_ERROR, -1, ""}),
    [](const auto& p) { return p.param.name; });

TEST(NcclLogParser, PytorchMultiLineLastErrorBecomesOneClassifiedEvent) {
  // Synthetic PyTorch message in the NCCLUtils format ("NCCL error in: %s:%d, %s, NCCL version
  // %s" + "\n" + interpretation + "\nLast error:\n" + ncclGetLastError()), behind a pdsh host.
  const auto s = parseNcclLog(
      "node-3: Traceback (most recent call last):\n"
      "node-3: torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled system error (run with "
      "NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
      "node-3: ncclSystemError: System call (e.g. socket, malloc) or external library call "
      "failed or device error. \n"
      "node-3: Last error:\n"
      "node-3: socketStartConnect: Connect to 10.1.1.1<35779> failed : Software caused "
      "connection abort\n");
  EXPECT_EQ(s.nccl_version(), "2.20.5");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::CONNECT_FAILED});
  const auto& e = s.events(0);
  EXPECT_EQ(e.peer(), "10.1.1.1<35779>");
  EXPECT_EQ(e.status(), 103);  // ECONNABORTED
  EXPECT_EQ(e.host(), "node-3");
  EXPECT_EQ(e.line_number(), 5u);
}

TEST(NcclLogParser, FrameworkErrorWithoutLastErrorStaysAGenericNcclError) {
  const auto s = parseNcclLog(
      "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL "
      "version 2.14.3\n"
      "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
      "device error.\n");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::NCCL_ERROR});
  EXPECT_EQ(s.events(0).line_number(), 1u);
}

TEST(NcclLogParser, ConfigurationFactsAreReportedOncePerHost) {
  const auto s = parseNcclLog(
      "a:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "a:2:2 [1] NCCL INFO NET/IB : No device found.\n"
      "b:1:1 [0] NCCL INFO NET/IB : No device found.\n"
      "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
      "a:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'\n"
      "a:1:1 [0] NCCL INFO Failed to open libibverbs.so[.1]\n"
      "a:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n");
  EXPECT_EQ(countKind(s, v1::NcclEvent::IB_NO_DEVICE), 2);
  EXPECT_EQ(countKind(s, v1::NcclEvent::GDR_DISABLED), 1);
  EXPECT_EQ(countKind(s, v1::NcclEvent::IBVERBS_MISSING), 1);
  EXPECT_EQ(countKind(s, v1::NcclEvent::IB_DISABLED_BY_ENV), 0);  // set to 0: IB stays on
  EXPECT_EQ(toVector(s.env_settings()), std::vector<std::string>{"NCCL_IB_DISABLE=0"});
  EXPECT_EQ(toVector(s.hosts()), (std::vector<std::string>{"a", "b"}));
}

TEST(NcclLogParser, HostsThatDisagreeOnTheNetworkAreAllListed) {
  const auto s = parseNcclLog(
      "a:1:1 [0] NCCL INFO Using network IB\n"
      "b:1:1 [0] NCCL INFO Using network Socket\n"
      "c:1:1 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(s.network(), "IB,Socket");
}

TEST(NcclLogRealCaptures, DevicesThatCannotBeOpenedAreNamedOncePerHost) {
  const auto s = parseFixture(
      "nccl-log_ibv-open-device-failed-unable-to-open-mlx5_58-59-roce_imagereward-"
      "issue-65.txt");
  std::set<std::string> devices;
  for (const auto& e : s.events()) {
    if (e.kind() == v1::NcclEvent::IB_OPEN_FAILED) devices.insert(e.rdma_device());
  }
  // "Call to ibv_open_device failed" names no device; the net_ib.cc lines do (mlx5_59 twice).
  EXPECT_EQ(devices, (std::set<std::string>{"", "mlx5_58", "mlx5_59"}));
  EXPECT_EQ(countKind(s, v1::NcclEvent::IB_OPEN_FAILED), 3);
  ASSERT_EQ(s.ib_devices_size(), 2);
}

TEST(NcclLogRealCaptures, SocketPollConnectWithAnErrnoIsAFailedConnection) {
  const auto s = parseFixture(
      "nccl-log_socketpollconnect-no-route-to-host-bootstrap-python-traceback_sglang-issue-"
      "3820.txt");
  ASSERT_EQ(countKind(s, v1::NcclEvent::CONNECT_FAILED), 1);
  EXPECT_EQ(s.events(0).kind(), v1::NcclEvent::CONNECT_FAILED);
  EXPECT_EQ(s.events(0).status(), 113);  // EHOSTUNREACH
  EXPECT_EQ(s.events(0).peer(), "10.0.0.4<56849>");
  EXPECT_EQ(s.events(0).host(), "node5");
}

TEST(NcclLogRealCaptures, GrepPrefixedSiteFormatPollWithoutPolloutIsAFailedConnection) {
  const auto s = parseFixture(
      "nccl-log_grep-file-prefix-custom-format-socketpollconnect-no-pollout_nccl-pr-1618.txt");
  ASSERT_EQ(countKind(s, v1::NcclEvent::CONNECT_FAILED), 2);  // two processes
  EXPECT_EQ(s.events(0).host(), "s12gn3064");
  EXPECT_EQ(s.events(0).line_number(), 1u);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"s12gn3064"});
}

TEST(NcclLogRealCaptures, RetryExceededComesFirstAndItsFlushesKeepTheirStatus) {
  const auto s = parseFixture(
      "nccl-log_ib-completion-status12-then-status5-flush-ipv4mapped-gids_nccl-issue-1814.txt");
  ASSERT_EQ(countKind(s, v1::NcclEvent::IB_COMPLETION_ERROR), 3);
  EXPECT_EQ(s.events(0).status(), 12);
  EXPECT_EQ(s.events(0).vendor_err(), 129);
  EXPECT_EQ(s.events(0).peer(), "172.36.143.59<44206>");
  EXPECT_EQ(s.events(0).opcode_or_op(), "Recv");
  EXPECT_EQ(s.events(1).status(), 5);
  EXPECT_EQ(s.events(0).host(), "hostname-test");  // behind the poster's markdown backtick
}

TEST(NcclLogRealCaptures, ModifyQpNoSuchDeviceInAContainerNamedByAUuid) {
  const auto s = parseFixture(
      "nccl-log_container-uuid-host-roce-modify-qp-no-such-device-chain-2_nccl-issue-799.txt");
  ASSERT_EQ(countKind(s, v1::NcclEvent::QP_SETUP_FAILED), 1);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"72bf7b08-26f3-4ebc-8b9d-85df3e4414c0"});
  EXPECT_EQ(s.network(), "IB");
}

TEST(NcclLogRealCaptures, AsyncFatalQpEventNamesTheDevicePort) {
  const auto s = parseFixture("nccl-log_ib-async-fatal-qp-invalid-request_nccl-issue-1919.txt");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_ASYNC_EVENT});
  EXPECT_EQ(s.events(0).rdma_device(), "mlx5_1:1");
  EXPECT_EQ(s.events(0).opcode_or_op(), "invalid request local work queue error");
  EXPECT_EQ(s.events(0).host(), "node-0");
  EXPECT_EQ(s.events(0).device(), 0);
}

TEST(NcclLogRealCaptures, RepeatedPortErrorsOnAllEightLocalRanksOfARedactedHost) {
  const auto s = parseFixture("nccl-log_ib-async-port-error-repeated_lit-llama-issue-380.txt");
  EXPECT_EQ(s.lines_total(), 18u);
  EXPECT_EQ(s.lines_nccl(), 8u);
  ASSERT_EQ(s.events_size(), 8);
  for (const auto& e : s.events()) {
    EXPECT_EQ(e.kind(), v1::NcclEvent::IB_ASYNC_EVENT);
    EXPECT_EQ(e.host(), "...-48");
    EXPECT_EQ(e.opcode_or_op(), "port error");
  }
  EXPECT_EQ(s.events(0).line_number(), 4u);
  EXPECT_EQ(s.events(7).line_number(), 18u);
}

TEST(NcclLogRealCaptures, PluginCompletionError4IsTheOnlyRootEventDespiteTheCascade) {
  const auto s = parseFixture(
      "nccl-log_ib-completion-error4-vendor81-service-thread-closed_nccl-tests-issue-252.txt");
  ASSERT_EQ(kindsOf(s),
            std::vector<Kind>{v1::NcclEvent::IB_COMPLETION_ERROR});  // "-> 6" and "[Service thread]
                                                                     // Connection closed" are not
  const auto& e = s.events(0);
  EXPECT_EQ(e.host(), "kolyoz2");
  EXPECT_EQ(e.status(), 4);
  EXPECT_EQ(e.vendor_err(), 81);
  EXPECT_EQ(e.peer(), "10.0.35.1<49189>");
  EXPECT_EQ(e.opcode_or_op(), "Send");
  EXPECT_EQ(e.line_number(), 4u);
  EXPECT_EQ(toVector(s.hosts()), (std::vector<std::string>{"kolyoz1", "kolyoz2"}));
}

TEST(NcclLogRealCaptures, CompletionError4Vendor81OnH100Hosts125) {
  const auto s = parseFixture("nccl-log_ib-completion-error4-vendor81_nccl-issue-928.txt");
  ASSERT_EQ(s.events_size(), 3);
  const std::vector<std::string> hosts = {"H100-2", "H100-1", "H100-5"};
  const std::vector<int> devices = {1, 1, 3};
  for (int i = 0; i < 3; ++i) {
    const auto& e = s.events(i);
    EXPECT_EQ(e.kind(), v1::NcclEvent::IB_COMPLETION_ERROR);
    EXPECT_EQ(e.host(), hosts[static_cast<std::size_t>(i)]);
    EXPECT_EQ(e.device(), devices[static_cast<std::size_t>(i)]);
    EXPECT_EQ(e.status(), 4);
    EXPECT_EQ(e.vendor_err(), 81);
    EXPECT_EQ(e.opcode_or_op(), "Send");
  }
  EXPECT_EQ(s.events(0).peer(), "fe80::966d:ae03:8b:df78%ib0<53249>");
  EXPECT_EQ(toVector(s.hosts()), hosts);
}

TEST(NcclLogRealCaptures, IbDisabledByEnvironmentUsesSocketOverIpoib) {
  const auto s = parseFixture("nccl-log_ib-disabled-socket-over-ipoib_nccl-tests-issue-188.txt");
  EXPECT_EQ(s.network(), "Socket");
  EXPECT_EQ(toVector(s.socket_interfaces()),
            (std::vector<std::string>{"ibs85f0:192.168.1.14", "ib0:192.168.1.15"}));
  EXPECT_EQ(toVector(s.env_settings()), std::vector<std::string>{"NCCL_IB_DISABLE=1"});
  EXPECT_EQ(countKind(s, v1::NcclEvent::IB_DISABLED_BY_ENV), 1);
  EXPECT_EQ(s.events_size(), 1);
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"user"});  // not "[user:852715]"
  EXPECT_EQ(s.transports_size(), 0);
}

TEST(NcclLogRealCaptures, MultiNicA100ChannelsAreIbWithGdr) {
  const auto s = parseFixture("nccl-log_ib-gdrdma-channels-a100-multi-nic_nccl-issue-707.txt");
  ASSERT_EQ(s.transports_size(), 1);
  EXPECT_EQ(s.transports(0).transport(), "NET/IB");
  EXPECT_EQ(s.transports(0).channel_lines(), 12u);
  EXPECT_TRUE(s.transports(0).gdr());
  EXPECT_EQ(s.events_size(), 0);
  EXPECT_EQ(s.nranks(), 4);  // lower bound: ranks 0..3 appear in the channel lines
}

TEST(NcclLogRealCaptures, GrepFilteredAksLogShowsGdrLevelAndIbGdrChannels) {
  const auto s = parseFixture("nccl-log_ib-gdrdma-gdr-level-sys-aks_aks-rdma-infiniband-pr-36.txt");
  EXPECT_EQ(toVector(s.env_settings()), std::vector<std::string>{"NCCL_NET_GDR_LEVEL=SYS"});
  ASSERT_NE(transport(s, "NET/IB"), nullptr);
  EXPECT_EQ(transport(s, "NET/IB")->channel_lines(), 7u);
  EXPECT_TRUE(transport(s, "NET/IB")->gdr());
  EXPECT_EQ(toVector(s.hosts()), std::vector<std::string>{"leader-h2nng"});
  EXPECT_EQ(s.lines_nccl(), 15u);  // the "k logs ... | grep GDR" command line is not NCCL's
}

TEST(NcclLogRealCaptures, SingleRankNoDeviceFallsBackToSocket) {
  const auto s = parseFixture("nccl-log_ib-no-device-socket-admin0-1rank_vissl-issue-480.txt");
  EXPECT_EQ(s.nccl_version(), "2.7.8+cuda10.2");
  EXPECT_EQ(s.nranks(), 1);
  EXPECT_EQ(s.network(), "Socket");
  EXPECT_EQ(toVector(s.socket_interfaces()), std::vector<std::string>{"admin0:145.101.32.23"});
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_NO_DEVICE});
  EXPECT_EQ(s.events(0).line_number(), 3u);
}

TEST(NcclLogRealCaptures, AwsSixtyFourRanksHaveNoDeviceAndSocketRings) {
  const auto s =
      parseFixture("nccl-log_ib-no-device-socket-fallback-64rank-aws_nccl-issue-226.txt");
  EXPECT_EQ(s.nccl_version(), "2.4.7+cuda9.2");
  EXPECT_EQ(s.nranks(), 64);
  EXPECT_EQ(countKind(s, v1::NcclEvent::IB_NO_DEVICE), 3);
  ASSERT_NE(transport(s, "NET/Socket"), nullptr);
  EXPECT_EQ(transport(s, "NET/Socket")->channel_lines(), 10u);
  EXPECT_FALSE(transport(s, "NET/Socket")->gdr());
  EXPECT_EQ(s.transports_size(), 1);
  EXPECT_EQ(countKind(s, v1::NcclEvent::SOCKET_TRANSPORT), 10);  // one per host with rings
  EXPECT_EQ(s.socket_interfaces_size(), 7);
  // Ring 00 : 35 -> 34 [send] on ip-172-31-0-119 → that process is rank 35.
  for (const auto& e : s.events()) {
    if (e.host() == "ip-172-31-0-119") {
      EXPECT_EQ(e.rank(), 35);
    }
  }
  EXPECT_EQ(s.hosts(0), "ip-172-31-0-11");
  EXPECT_EQ(s.hosts_size(), 22);
}

TEST(NcclLogRealCaptures, IrdmaRoceUsesTheIbextPluginNotSockets) {
  const auto s = parseFixture("nccl-log_irdma-roce-ibext-plugin-init_nccl-tests-issue-227.txt");
  EXPECT_EQ(s.nccl_version(), "2.21.5+cuda12.4");
  EXPECT_EQ(s.network(), "IBext_v8");
  EXPECT_EQ(toVector(s.ib_devices()), (std::vector<std::string>{"irdma0:1/RoCE", "irdma3:1/RoCE"}));
  EXPECT_EQ(s.socket_interfaces_size(), 0);  // "Bootstrap : Using eth0" is bootstrap only
  EXPECT_EQ(transport(s, "NET/Socket"), nullptr);
  EXPECT_EQ(s.events_size(), 0);
  EXPECT_EQ(s.nranks(), 2);  // nccl-tests "#  Rank  1 ... on ai-worker03"
  EXPECT_EQ(toVector(s.hosts()), (std::vector<std::string>{"ai-worker03", "ai-worker01"}));
}

TEST(NcclLogRealCaptures, PytorchRemoteErrorOneLinerCarriesStatus12Vendor129) {
  const auto s = parseFixture(
      "nccl-log_pytorch-ncclRemoteError-ib-error12-vendor129_stanford_alpaca-issue-207.txt");
  EXPECT_EQ(s.nccl_version(), "2.14.3");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_COMPLETION_ERROR});
  const auto& e = s.events(0);
  EXPECT_EQ(e.status(), 12);
  EXPECT_EQ(e.vendor_err(), 129);
  EXPECT_EQ(e.peer(), "11.214.147.122<39138>");
  EXPECT_EQ(e.device(), -1);
  EXPECT_EQ(e.line_number(), 1u);
}

TEST(NcclLogRealCaptures, PytorchWatchdogTimeoutsGiveEventsAndRankProgress) {
  const auto s =
      parseFixture("nccl-log_pytorch-watchdog-timeout-reduce-scatter_llamafactory-issue-6269.txt");
  ASSERT_EQ(s.events_size(), 3);
  const std::vector<int> ranks = {0, 4, 3};
  for (int i = 0; i < 3; ++i) {
    const auto& e = s.events(i);
    EXPECT_EQ(e.kind(), v1::NcclEvent::COLLECTIVE_TIMEOUT);
    EXPECT_EQ(e.rank(), ranks[static_cast<std::size_t>(i)]);
    EXPECT_EQ(e.op_count(), 7753u);
    EXPECT_EQ(e.opcode_or_op(), "_REDUCE_SCATTER_BASE");
  }
  ASSERT_EQ(s.ranks_size(), 3);
  EXPECT_EQ(s.ranks(0).rank(), 0);
  EXPECT_EQ(s.ranks(1).rank(), 3);
  EXPECT_EQ(s.ranks(2).rank(), 4);
  for (const auto& r : s.ranks()) {
    EXPECT_EQ(r.op_count(), 7753u);
    EXPECT_EQ(r.sequence(), v1::NcclRankProgress::TORCH_SEQ_NUM);  // decimal, not an opCount
  }
  EXPECT_EQ(s.nranks(), -1);
}

TEST(NcclLogRealCaptures, TwoNodeRoceInitHasIbNetworkAndTwoRanks) {
  const auto s = parseFixture("nccl-log_roce-2node-gid3-init-rings-trees_nccl-tests-issue-185.txt");
  EXPECT_EQ(s.nccl_version(), "2.19.3+cuda12.3");
  EXPECT_EQ(s.network(), "IB");
  EXPECT_EQ(toVector(s.ib_devices()),
            (std::vector<std::string>{"mlx5_10:1/RoCE", "mlx5_11:1/RoCE"}));
  EXPECT_EQ(s.nranks(), 2);
  EXPECT_EQ(s.transports_size(), 0);  // "Ring 00 : 0 -> 1 -> 0" is a graph, not a connection
  EXPECT_EQ(s.events_size(), 0);
  EXPECT_EQ(toVector(s.hosts()), (std::vector<std::string>{"dgxh100-3", "dgxh100-4"}));
}

TEST(NcclLogRealCaptures, GidIndexZeroIsRecordedAsAnEnvironmentSetting) {
  const auto s = parseFixture("nccl-log_roce-gid-index0-linklocal-connect_nccl-issue-1657.txt");
  EXPECT_EQ(toVector(s.env_settings()), std::vector<std::string>{"NCCL_IB_GID_INDEX=0"});
  ASSERT_NE(transport(s, "NET/IB"), nullptr);
  EXPECT_EQ(transport(s, "NET/IB")->channel_lines(), 1u);
  EXPECT_FALSE(transport(s, "NET/IB")->gdr());
  EXPECT_EQ(s.events_size(), 0);  // "sendConnect ncclProxyCallAsync" is not a failure
}

TEST(NcclLogRealCaptures, RoceIpv6GidCompletionStatus12Vendor129OnRecv) {
  const auto s =
      parseFixture("nccl-log_roce-ipv6gid-completion-status12-vendor129_nccl-issue-1405.txt");
  ASSERT_EQ(s.events_size(), 3);
  for (const auto& e : s.events()) {
    EXPECT_EQ(e.kind(), v1::NcclEvent::IB_COMPLETION_ERROR);
    EXPECT_EQ(e.status(), 12);
    EXPECT_EQ(e.vendor_err(), 129);
    EXPECT_EQ(e.opcode_or_op(), "Recv");
    EXPECT_EQ(e.device(), 4);
    EXPECT_EQ(e.host(), "kp-ddp-worker-0");
  }
  EXPECT_EQ(s.events(2).peer(), "10.216.210.236<49892>");
}

TEST(NcclLogRealCaptures, FourNodeSocketRingsAreASocketTransport) {
  const auto s = parseFixture("nccl-log_socket-4node-rings_nccl-issue-1344.txt");
  ASSERT_NE(transport(s, "NET/Socket"), nullptr);
  EXPECT_EQ(transport(s, "NET/Socket")->channel_lines(), 4u);
  EXPECT_EQ(countKind(s, v1::NcclEvent::SOCKET_TRANSPORT), 1);
  EXPECT_EQ(s.events(0).rank(), 3);  // "3[2000] -> 0[2000] [send]"
  EXPECT_EQ(s.nranks(), 4);
}

TEST(NcclLogRealCaptures, BrokenPipeIsAConnectFailureOverTheSocketTransport) {
  const auto s =
      parseFixture("nccl-log_socket-broken-pipe-remote-peer-closed-aws_nccl-issue-795.txt");
  const auto kinds = kindsOf(s);
  EXPECT_EQ(kinds,
            (std::vector<Kind>{v1::NcclEvent::CONNECT_FAILED, v1::NcclEvent::SOCKET_TRANSPORT,
                               v1::NcclEvent::CONNECT_FAILED, v1::NcclEvent::CONNECT_FAILED}));
  EXPECT_EQ(s.events(0).peer(), "10.200.84.247<58355>");
  EXPECT_EQ(s.events(0).status(), 32);       // EPIPE
  EXPECT_EQ(s.events(1).line_number(), 3u);  // stack through transport/net_socket.cc
  EXPECT_EQ(s.events(3).peer(),
            "a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster"
            "<47861>");
}

TEST_P(NcclErrorChains, ChainIsOneEventWithItsResultDecoded) {
  const auto s = parseNcclLog(GetParam().text);
  ASSERT_EQ(s.events_size(), 1) << GetParam().text;
  EXPECT_EQ(s.events(0).kind(), GetParam().kind);
  EXPECT_EQ(s.events(0).opcode_or_op(), GetParam().op);
  EXPECT_EQ(s.events(0).line_number(), 1u);
  EXPECT_EQ(s.events(0).host(), "n1");
}

INSTANTIATE_TEST_SUITE_P(
    Chains, NcclErrorChains,
    ::testing::Values(
        ChainCase{"SocketSystemError",
                  "n1:12:13 [0] NCCL INFO misc/socket.cc:567 -> 2\n"
                  "n1:12:13 [0] NCCL INFO misc/socket.cc:618 -> 2\n"
                  "n1:12:13 [0] NCCL INFO init.cc:1350 -> 2\n",
                  v1::NcclEvent::CONNECT_FAILED, "ncclSystemError"},
        ChainCase{"BootstrapSystemError",
                  "n1:12:13 [7] NCCL INFO bootstrap.cc:270 -> 2\n"
                  "n1:12:13 [7] NCCL INFO group.cc:65 -> 2 [Async thread]\n",
                  v1::NcclEvent::CONNECT_FAILED, "ncclSystemError"},
        ChainCase{"SocketInternalError", "n1:180:915 [7] NCCL INFO misc/socket.cc:47 -> 3\n",
                  v1::NcclEvent::CONNECT_FAILED, "ncclInternalError"},
        ChainCase{"SocketRemoteError", "n1:1:2 [0] NCCL INFO misc/socket.cc:749 -> 6\n",
                  v1::NcclEvent::CONNECT_FAILED, "ncclRemoteError"},
        ChainCase{"InvalidUsageElsewhere",
                  "n1:1:2 [0] NCCL INFO init.cc:1089 -> 5\n"
                  "n1:1:2 [0] NCCL INFO group.cc:96 -> 5\n",
                  v1::NcclEvent::NCCL_ERROR, "ncclInvalidUsage"},
        ChainCase{"InternalErrorElsewhere", "n1:1:2 [0] NCCL INFO transport/p2p.cc:438 -> 3\n",
                  v1::NcclEvent::NCCL_ERROR, "ncclInternalError"}),
    [](const auto& p) { return p.param.name; });

TEST(NcclErrorChains, ChainAfterAWarnOfTheSameProcessIsItsConsequence) {
  const auto s = parseNcclLog(
      "n1:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to "
      "10.0.0.2<45763> failed : Software caused connection abort\n"
      "n1:39964:40075 [0] NCCL INFO misc/socket.cc:564 -> 2\n");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::CONNECT_FAILED});
  EXPECT_EQ(s.events(0).line_number(), 1u);
}

TEST(NcclErrorChains, RemoteEchoElsewhereIsDroppedWhenTheLogNamesTheRootError) {
  const auto s = parseNcclLog(
      "a:1:2 [0] NCCL INFO proxy.cc:698 -> 6\n"
      "b:3:4 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n");
  ASSERT_EQ(kindsOf(s), std::vector<Kind>{v1::NcclEvent::IB_ASYNC_EVENT});
}

TEST(NcclOldReleases, Nccl23InternalNetworkSocketIsTheNetwork) {
  EXPECT_EQ(parseNcclLog("w-0:27:27 [0] NCCL INFO Using internal Network Socket\n").network(),
            "Socket");
}

TEST(NcclTimeouts, HeartbeatMonitorIsOneTimeoutPerRank) {
  const auto s = parseNcclLog(
      "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process "
      "will be terminated after dumping debug info. workMetaList_.size()=103\n"
      "[rank1]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank 1] [PG 0 Rank 1] ProcessGroupNCCL's "
      "watchdog got stuck for 600 seconds without making progress\n"
      "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out!\n");
  ASSERT_EQ(s.events_size(), 2);
  EXPECT_EQ(s.events(0).kind(), v1::NcclEvent::COLLECTIVE_TIMEOUT);
  EXPECT_EQ(s.events(0).rank(), 1);
  EXPECT_EQ(s.events(0).opcode_or_op(), "heartbeat monitor");
  EXPECT_EQ(s.events(1).rank(), 0);
}

}  // namespace
}  // namespace ibc::core

namespace ibc::core {
namespace {

using namespace ibc::test;

// NCCL's RAS report (nccl_log_ras.cpp): the ranks' operation counts it lists, per collective.
TEST(NcclLogRealCaptures, ARasMismatchIsEachGroupsOperationCountWithItsNamedRanks) {
  const auto s = parseFixture("nccl-ras_mismatch-allgather-30-ranks-behind-2_nccl-issue-1911.txt");
  ASSERT_EQ(s.ranks_size(), 3);
  // The 30 ranks RAS counted without naming them, then the two it named (ranks sort first by
  // rank: the unnamed group is rank -1).
  EXPECT_EQ(s.ranks(0).rank(), -1);
  EXPECT_EQ(s.ranks(0).ranks(), 30u);
  EXPECT_EQ(s.ranks(0).op_count(), 640u);
  EXPECT_EQ(s.ranks(0).collective(), "AllGather");
  EXPECT_EQ(s.ranks(0).sequence(), v1::NcclRankProgress::RAS_OPERATION);
  EXPECT_EQ(s.ranks(1).rank(), 12);
  EXPECT_EQ(s.ranks(1).op_count(), 641u);
  EXPECT_EQ(s.ranks(1).host(), "10.137.190.124");
  EXPECT_EQ(s.ranks(2).rank(), 13);
  EXPECT_EQ(s.events_size(), 0);
}

TEST(NcclLogRasReport, ALoneStragglerAndRanksWithoutOperationsOrProcessAreRead) {
  // Shapes of NCCL's src/ras/client_support.cc (SYNTHETIC lines in those shapes).
  const auto s = parseNcclLog(
      "#0-0 (78db921d1c117b4a) MISMATCH\n"
      "  Communicator ranks have different AllReduce operation counts\n"
      "  7 ranks have launched up to operation 64\n"
      "  Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node "
      "node1\n"
      "\n"
      "  Communicator ranks have different Broadcast operation counts\n"
      "  6 ranks have launched up to operation 3\n"
      "  2 ranks have not launched any operations\n"
      "  Rank 4 -- GPU 4 managed by process 11 on node node2\n"
      "  Rank 5 -- [process information not found]\n"
      "  Rank 9 has status RUNNING -- GPU 1 managed by process 12 on node node3\n");
  ASSERT_EQ(s.ranks_size(), 5);
  EXPECT_EQ(s.ranks(0).ranks(), 7u);  // AllReduce: 7 at 64
  EXPECT_EQ(s.ranks(1).ranks(), 6u);  // Broadcast: 6 at 3
  EXPECT_EQ(s.ranks(2).rank(), 4);
  EXPECT_EQ(s.ranks(2).op_count(), 0u);
  EXPECT_EQ(s.ranks(2).collective(), "Broadcast");
  EXPECT_EQ(s.ranks(3).rank(), 5);
  EXPECT_EQ(s.ranks(3).host(), "");
  EXPECT_EQ(s.ranks(4).rank(), 7);
  EXPECT_EQ(s.ranks(4).op_count(), 60u);
  EXPECT_EQ(s.ranks(4).host(), "node1");
  // Outside a RAS block the same words are not counts.
  EXPECT_EQ(parseNcclLog("  30 ranks have launched up to operation 640\n").ranks_size(), 0);
}

}  // namespace
}  // namespace ibc::core
