// What every livemonctl command shares: how a failure is reported and the progress line.
#include <livemonctl/command.h>

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include <livemon/transport/error.h>

namespace livemon::livemonctl {
namespace {

TEST(Command, ASetupMistakeEndsTheCommandWithItsNameAndStatusOne) {
  std::ostringstream err;
  EXPECT_EQ(runCommand("demo", err, []() -> int { throw std::invalid_argument("window must be at least 1 ms"); }),
            kFailedExitCode);
  EXPECT_EQ(err.str(), "livemonctl demo: window must be at least 1 ms\n");
  err.str("");
  EXPECT_EQ(runCommand("replay", err,
                       []() -> int {
                         throw transport::TransportError("tcp://x:1", "Address already in use",
                                                         "cannot bind tcp://x:1: Address already in use");
                       }),
            kFailedExitCode);
  EXPECT_EQ(err.str(), "livemonctl replay: cannot bind tcp://x:1: Address already in use\n");
}

TEST(Command, PassesTheExitCodeOfItsWorkThrough) {
  std::ostringstream err;
  EXPECT_EQ(runCommand("export", err, [] { return kUsageExitCode; }), kUsageExitCode);
  EXPECT_EQ(runCommand("info", err, [] { return kInterruptedExitCode; }), 130);
  EXPECT_EQ(err.str(), "");
}

// A defect is not dressed up as a command failure: tests and the fuzz targets see it, and main()
// reports it as a last resort in the same form.
TEST(Command, LetsAnythingElsePropagate) {
  std::ostringstream err;
  EXPECT_THROW(runCommand("info", err, []() -> int { throw std::out_of_range("index"); }), std::out_of_range);
  EXPECT_EQ(err.str(), "");
  EXPECT_EQ(reportUnexpected("info", err, std::out_of_range("index")), kFailedExitCode);
  EXPECT_EQ(err.str(), "livemonctl info: index\n");
}

TEST(StatusLine, RewritesOneLineOnlyWhenEnabled) {
  std::ostringstream off;
  {
    StatusLine status(off, false);
    status.show("reading: 10 %", true);
  }
  EXPECT_EQ(off.str(), "") << "standard error is not a terminal";
  std::ostringstream on;
  {
    StatusLine status(on, true);
    status.show("reading: 10 %", true);
    status.show("reading: 20 %", true);
  }
  EXPECT_EQ(on.str(), "\rreading: 10 %\033[K\rreading: 20 %\033[K\n") << "the line ends once the status is done";
}

}  // namespace
}  // namespace livemon::livemonctl
