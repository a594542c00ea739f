#pragma once

// A SYNTHETIC node for the counter tests (counters_test.cpp, node_metrics_test.cpp): one
// mlx4-like port with a counter in every group and a window over it.

#include <cstdint>
#include <string>

#include "ibcollect/v1/snapshot.pb.h"

namespace ibc::test {

namespace v1 = ::ibcollect::v1;

// Appends counter `name` = `value` to `list`.
inline void addCounter(google::protobuf::RepeatedPtrField<v1::Counter>* list,
                       const std::string& name, uint64_t value) {
  auto* c = list->Add();
  c->set_name(name);
  c->set_value(value);
}

// One mlx4-like port: legacy counters/, 64-bit counters_ext/, hw_counters, plus a
// device-level hw_counter; `after` is added to every value in the window's sample.
inline v1::Snapshot mlx4Node(const std::string& name, uint64_t after_errors, uint64_t after_words) {
  v1::Snapshot s;
  s.mutable_node()->set_hostname(name);
  auto* d = s.add_devices();
  d->set_name("mlx4_0");
  addCounter(d->mutable_hw_counters(), "out_of_buffer", 1);
  auto* p = d->add_ports();
  p->set_port(1);
  addCounter(p->mutable_counters(), "symbol_error", 3);
  addCounter(p->mutable_counters(), "port_xmit_data", 1000);
  addCounter(p->mutable_counters_ext(), "port_xmit_data_64", 1000);
  addCounter(p->mutable_counters_ext(), "port_rcv_data_64", 1000);
  addCounter(p->mutable_hw_counters(), "local_ack_timeout_err", 0);
  auto* unavailable = p->mutable_counters()->Add();
  unavailable->set_name("VL15_dropped");
  unavailable->set_unavailable_reason("EINVAL");

  auto* w = s.add_window();
  w->set_interval_seconds(10);
  auto* sp = w->add_ports();
  sp->set_device("mlx4_0");
  sp->set_port(1);
  addCounter(sp->mutable_counters(), "symbol_error", 3 + after_errors);
  // The legacy 32-bit counter stopped (saturated); the 64-bit one kept counting.
  addCounter(sp->mutable_counters(), "port_xmit_data", 1000);
  addCounter(sp->mutable_counters_ext(), "port_xmit_data_64", 1000 + after_words);
  addCounter(sp->mutable_counters_ext(), "port_rcv_data_64", 1000 + after_words);
  addCounter(sp->mutable_hw_counters(), "local_ack_timeout_err", 0);
  auto* sd = w->add_ports();
  sd->set_device("mlx4_0");
  sd->set_port(0);
  addCounter(sd->mutable_hw_counters(), "out_of_buffer", 0);  // went backwards: reset
  return s;
}

}  // namespace ibc::test
