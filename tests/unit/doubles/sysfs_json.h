#pragma once

// Materialises the facebookresearch/gcm health-check capture format — a JSON object
// {"/sys/...path": "file content"} — the same way tests/fixtures/real/sysfs/
// json_sysfs_extract.py does, without needing Python.

#include <string>

namespace ibc::test {

// Writes every entry under dest (dest + path). Returns the number of files written;
// fails the current test on a malformed document.
int materializeSysfsJson(const std::string& json_text, const std::string& dest);

// A fresh empty directory under the test temp dir, removed at process exit.
std::string makeTempDir(const std::string& name);

}  // namespace ibc::test
