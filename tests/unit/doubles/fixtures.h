#pragma once

// Test-only access to the fixture files under tests/fixtures (real captures and
// generated synthetic ones). Tests read fixtures; the code under test gets text.

#include <string>
#include <vector>

namespace ibc::test {

// Absolute path of a fixture, relative to tests/fixtures ("real/dmesg/x.txt").
std::string fixturePath(const std::string& relative);
// The whole file; fails the current test (and returns "") when unreadable.
std::string readFixture(const std::string& relative);
// Files (not directories) directly inside a fixture directory, sorted.
std::vector<std::string> fixtureFiles(const std::string& relative_dir,
                                      const std::string& suffix = "");
// Expects `actual` to equal tests/fixtures/golden/NAME byte for byte; with
// IBC_UPDATE_GOLDEN=1 writes it there instead (scripts/update-golden.sh, then review the
// diff like code).
void compareWithGolden(const std::string& name, const std::string& actual);

}  // namespace ibc::test
