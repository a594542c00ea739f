#pragma once

// The one merge of evidence from two sources about one node (a saved snapshot and a
// pasted tool output, two pastes): whatever one source has and the other lacks is kept,
// and where both say something different the first source's value stays and the conflict
// is returned with both values side by side. Nothing is dropped silently (issue 10).

#include <google/protobuf/message.h>

#include <string>
#include <vector>

namespace ibc::core {

struct EvidenceConflict {
  std::string where;  // "devices[mlx5_0].ports[1].state"
  std::string kept;   // the value `into` had, printed
  std::string other;  // the value `from` had, printed
};

// Merges `from` into `into` (the same message type) by reflection. Singular fields: taken
// when `into` lacks them (proto3 scalars: when `into` holds the default), a conflict when
// both are set and differ. Messages of type EnumValue and Counter are single values (a
// state, a counter reading). Repeated messages are matched by key: `name` (devices,
// counters, netdevs: a netdev is the same only when neither names a different RDMA
// device), `port` (ports); entries without a key are appended unless an equal one is
// there. Repeated scalars are unioned. Linear in the size of both messages, apart from
// the key lookups (quadratic in the entries of one list, which are few).
std::vector<EvidenceConflict> mergeEvidence(google::protobuf::Message& into,
                                            const google::protobuf::Message& from);

// "devices[mlx5_0].ports[1].state: '4: ACTIVE' (node.ibsnap) vs '1: DOWN' (paste.txt)".
std::string describeConflict(const EvidenceConflict& c, const std::string& kept_source,
                             const std::string& other_source);

}  // namespace ibc::core
