// Runs the Python example of docs/wire-format.md, exactly as printed there, against a live
// publisher, with the Debian python3-zmq and python3-msgpack.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

// The first ```python block after the example marker.
std::string pythonExampleFromDoc() {
  std::ifstream file(test::sourceDir() + "/docs/wire-format.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  // "compile": the docs tests only compile it, as it needs a publisher; this test gives it one.
  const auto marker = doc.find("<!-- example: python compile -->");
  if (marker == std::string::npos) return {};
  const auto begin = doc.find("```python\n", marker);
  if (begin == std::string::npos) return {};
  const auto end = doc.find("```", begin + 10);
  return end == std::string::npos ? std::string() : doc.substr(begin + 10, end - begin - 10);
}

TEST(PythonExample, IsAtMostTenLines) {
  const std::string example = pythonExampleFromDoc();
  ASSERT_FALSE(example.empty()) << "docs/wire-format.md lacks the Python example";
  EXPECT_LE(std::count(example.begin(), example.end(), '\n'), 10);
}

TEST(PythonExample, PrintsTheEventsOfALivePublisher) {
  const std::string example = pythonExampleFromDoc();
  ASSERT_FALSE(example.empty());
  test::TempDir dir;
  const std::string script = (dir.path() / "tail.py").string();
  std::ofstream(script) << example;

  PublisherOptions options = test::testPublisherOptions();
  options.runName = "pyexample";
  Publisher publisher(options);
  const char* python = std::getenv("LIVEMON_TEST_PYTHON");
  test::ChildProcess child({python ? python : "/usr/bin/python3", script, publisher.endpoints()[0]});

  // Until the script has connected and subscribed its events are lost, so keep logging.
  const Event event = test::makeEvent("python.check", {{"marker", std::string("grüße")},
                                                       {"one", 1.0},
                                                       {"count", int64_t{3}},
                                                       {"ok", true},
                                                       {"nan", std::numeric_limits<double>::quiet_NaN()},
                                                       {"inf", -std::numeric_limits<double>::infinity()}});
  const bool printed = child.readStdoutUntil(
      [](const std::string& out) { return out.find("python.check") != std::string::npos && out.find('\n') != std::string::npos; },
      test::kDeadline, [&] { logEvent(event); });
  child.signal(SIGKILL);
  child.wait();
  ASSERT_TRUE(printed) << "stdout: " << child.out() << "\nstderr: " << child.err();

  std::string line;
  std::istringstream lines(child.out());
  while (std::getline(lines, line) && line.find("python.check") == std::string::npos) {
  }
  EXPECT_EQ(line.rfind("pyexample python.check ", 0), 0u) << line;
  EXPECT_NE(line.find(" 1700000000123456789 "), std::string::npos) << line;
  // Types survive into Python: 1.0 stays a float, NaN and -Inf stay floats.
  EXPECT_NE(line.find("'marker': 'grüße'"), std::string::npos) << line;
  EXPECT_NE(line.find("'one': 1.0"), std::string::npos) << line;
  EXPECT_NE(line.find("'count': 3"), std::string::npos) << line;
  EXPECT_NE(line.find("'ok': True"), std::string::npos) << line;
  EXPECT_NE(line.find("'nan': nan"), std::string::npos) << line;
  EXPECT_NE(line.find("'inf': -inf"), std::string::npos) << line;
}

}  // namespace
}  // namespace livemon::transport
