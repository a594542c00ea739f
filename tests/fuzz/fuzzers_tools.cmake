# Pasted tool output (`analyze --tool-output`): the recogniser and every per-tool parser.
ibc_add_fuzzer(tool_output
  SEEDS real/ibtools real/ethtool real/iplink
        real/sysfs/sysfs-grep_i40iw0-counters-no-pma_node_exporter-issue-966.txt)
