#pragma once

// JSON output as the tests read it: with a real parser (nlohmann-json), never by string search.

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace livemon::transport::test {

using Json = nlohmann::json;

// `text` parsed as one JSON value; throws std::runtime_error quoting the text when it does not
// parse, which fails the test that called it.
inline Json parseJson(const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& error) {
    throw std::runtime_error(std::string("not JSON (") + error.what() + "): " + text);
  }
}

// Every non-empty line of `text` parsed as one JSON value (JSON lines, as `tail --json` and
// `export` print them).
inline std::vector<Json> parseJsonLines(const std::string& text) {
  std::vector<Json> values;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty()) values.push_back(parseJson(line));
  }
  return values;
}

}  // namespace livemon::transport::test
