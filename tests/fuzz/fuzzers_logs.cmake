# Log parsers: kernel log (dmesg, journal, /dev/kmsg), NCCL debug logs, nccl-tests output.
ibc_add_fuzzer(kernel_log SEEDS real/dmesg)
ibc_add_fuzzer(nccl_log SEEDS real/nccl-logs)
ibc_add_fuzzer(nccl_tests SEEDS real/nccl-tests)
