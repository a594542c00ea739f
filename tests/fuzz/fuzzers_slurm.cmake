ibc_add_fuzzer(slurm SEEDS real/slurm)
