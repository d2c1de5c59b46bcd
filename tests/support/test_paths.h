#pragma once

#include <string>
#include <string_view>

namespace livemon::test_paths {

// Paths the tests need, defined in a source file the build generates (tests/CMakeLists.txt), so
// that no test's compile command names the clone it was built in (ccache hits across clones).

// This source tree: its scripts and fixtures.
std::string sourceDir();
// The file this build made for `target` (a program, a probe, a module); std::out_of_range for a
// target the build has not.
std::string builtFile(std::string_view target);
inline std::string livemonctlPath() { return builtFile("livemonctl"); }

}  // namespace livemon::test_paths
