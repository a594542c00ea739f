# Transport: the frame decoder (every byte a collector reads goes through it) and the
# signed envelope (decode, chain and signature verification, index keys).
ibc_add_fuzzer(frame_decoder)
ibc_add_fuzzer(signed_envelope LIBS ibc_collector)
