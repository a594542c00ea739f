ibc_add_fuzzer(step_output)
