ibc_add_fuzzer(sysfs_values SEEDS real/sysfs)
