# PF-side tool output (`host-inspect --paste`): mlxlink, mlxconfig, flint, ethtool -m,
# ip link VF tables, AER counters, PF kernel log; seeded with the real PF captures.
ibc_add_fuzzer(pf_tools SEEDS real/pf)
