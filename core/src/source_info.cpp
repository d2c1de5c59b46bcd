#include <livemon/source_info.h>

namespace livemon {

std::string describe(const SourceInfo& source) {
  std::string text = source.run;
  text.append("@").append(source.host).append(":").append(std::to_string(source.pid));
  if (source.rank) {
    text.append(" rank ").append(std::to_string(*source.rank));
    if (source.worldSize) text.append("/").append(std::to_string(*source.worldSize));
  }
  return text;
}

}  // namespace livemon
