# Escalation bundles (docs/formats.md): the archive reader, manifest parser and verification.
ibc_add_fuzzer(bundle_reader LIBS ibc_bundle)
