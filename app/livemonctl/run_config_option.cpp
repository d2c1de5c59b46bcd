#include <livemonctl/run_config_option.h>

#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace livemon::livemonctl {

DataValue parseConfigValue(std::string_view text) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  int64_t integer = 0;
  if (const auto [end, error] = std::from_chars(first, last, integer); !text.empty() && error == std::errc() && end == last) {
    return integer;
  }
  double number = 0;
  if (const auto [end, error] = std::from_chars(first, last, number); !text.empty() && error == std::errc() && end == last) {
    return number;
  }
  if (text == "true") return true;
  if (text == "false") return false;
  return std::string(text);
}

RunConfig parseConfigEntries(const std::vector<std::string>& entries) {
  RunConfig config;
  for (const std::string& entry : entries) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos) throw std::invalid_argument("\"" + entry + "\" is not KEY=VALUE");
    if (equals == 0) throw std::invalid_argument("\"" + entry + "\" has an empty key");
    if (std::string_view(entry).substr(0, equals) == kStepKey) {
      throw std::invalid_argument("\"" + entry + "\": the key \"step\" is the event's step; name it otherwise");
    }
    config.insert_or_assign(entry.substr(0, equals), parseConfigValue(std::string_view(entry).substr(equals + 1)));
  }
  return config;
}

}  // namespace livemon::livemonctl
