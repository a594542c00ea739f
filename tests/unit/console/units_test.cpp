// units.h: counters and rates in their units (data counters count 4-byte words), amounts
// with binary prefixes, and the scale an axis puts its numbers in.

#include <gtest/gtest.h>

#include "ibc/console/units.h"

namespace ibc::console {
namespace {

TEST(CounterUnits, DataCountersAreFourByteWordsShownAsBytesWithBinaryPrefixes) {
  EXPECT_EQ(counterUnit("port_xmit_data"), CounterUnit::Bytes);
  EXPECT_EQ(counterUnit("port_rcv_data_64"), CounterUnit::Bytes);
  EXPECT_EQ(counterScale("port_xmit_data"), 4.0);
  EXPECT_EQ(counterScale("port_rcv_data_64"), 4.0);
  EXPECT_EQ(counterUnit("rx_vport_rdma_unicast_bytes"), CounterUnit::Bytes);
  EXPECT_EQ(counterScale("rx_vport_rdma_unicast_bytes"), 1.0);
  EXPECT_EQ(counterUnit("port_xmit_packets"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("unicast_rcv_packets"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("rx_pkts"), CounterUnit::Packets);
  EXPECT_EQ(counterUnit("symbol_error"), CounterUnit::Count);
  EXPECT_EQ(counterUnit("port_xmit_wait"), CounterUnit::Count);
  EXPECT_EQ(counterScale("symbol_error"), 1.0);

  EXPECT_EQ(formatAmount(812, CounterUnit::Bytes), "812 bytes");
  EXPECT_EQ(formatAmount(1536, CounterUnit::Bytes), "1.50 KiB");
  EXPECT_EQ(formatAmount(3.0 * 1024 * 1024 * 1024, CounterUnit::Bytes), "3.00 GiB");
  EXPECT_EQ(formatAmount(123.0 * 1024 * 1024, CounterUnit::Bytes), "123 MiB");
  EXPECT_EQ(formatAmount(1234567, CounterUnit::Packets), "1,234,567 packets");
  EXPECT_EQ(formatAmount(8109, CounterUnit::Count), "8,109");
  EXPECT_EQ(formatAmount(-468, CounterUnit::Count), "-468");
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 5.0 * 1024 * 1024 * 1024).suffix, "GiB");
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 5.0 * 1024 * 1024 * 1024).divisor, 1024.0 * 1024 * 1024);
  EXPECT_EQ(unitScale(CounterUnit::Bytes, 100).suffix, "bytes");
  EXPECT_EQ(unitScale(CounterUnit::Packets, 1e9).divisor, 1);
  // A counter's raw counts and rates in its unit (node page, diff).
  EXPECT_EQ(formatCounter("port_xmit_data", 1000), "3.91 KiB");
  EXPECT_EQ(formatCounter("port_rcv_packets", 87169372), "87,169,372 packets");
  EXPECT_EQ(formatCounter("symbol_error", 12), "12");
  EXPECT_EQ(formatCounterRate("port_xmit_data", 3.0 * 1024 * 1024), "12.0 MiB/s");
  EXPECT_EQ(formatCounterRate("port_xmit_packets", 3), "3.0 packets/s");
  EXPECT_EQ(formatCounterRate("symbol_error", 0.4), "0.4/s");
}

}  // namespace
}  // namespace ibc::console
