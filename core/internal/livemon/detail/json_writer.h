#pragma once

// Internal to livemon: shared by core (Chrome traces) and the livemonctl commands (every --json
// output) through livemon::core's build-tree include path. Never installed; not part of the API.

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace livemon::detail {

// Appends `value` as the shortest text that reads back as it, with ".0" added to a finite
// integral value so that it still reads as a double: "0.5", "60.0", "1e+300", "-0.0". NaN and ±Inf
// come out as "nan", "inf" and "-inf" (not JSON: JsonWriter::number() spells them as strings).
void appendExactDouble(std::string& out, double value);

// Not thread-safe: one owner at a time; one writer builds one document on one thread.
//
// Writes one JSON value, usually an object, into a string, token by token:
//
//   JsonWriter json;
//   json.beginObject().key("run").string(run).key("pid").integer(pid).endObject();
//
// Keys and strings pass through appendJsonString (<livemon/json_text.h>): quotes, backslashes and
// control characters are escaped and invalid UTF-8 becomes U+FFFD, so the output always parses,
// whatever bytes a name holds. Doubles are exact and always carry a '.' or an exponent, so a reader
// keeps them apart from integers; NaN and ±Inf, which JSON lacks, are the strings "NaN",
// "Infinity" and "-Infinity". Integers are exact over all of int64 and uint64.
//
// The separators are compact ({"a":1,"b":[2,3]}) or spaced ({"a": 1, "b": [2, 3]}), and an array
// may put each element on a line of its own; nothing else is ever added, so an output built by
// hand before keeps its bytes. Misuse is a defect and throws std::logic_error: a key outside an
// object or twice in a row, a value in an object without its key, an end that closes nothing or
// the wrong kind, a second value at the top.
class JsonWriter {
 public:
  enum class Separators {
    Compact,  // "," and ":"
    Spaced,   // ", " and ": "
  };
  enum class ArrayLayout {
    Inline,      // [1,2]
    OnePerLine,  // "[\n1,\n2\n]": each element on a line of its own ("[]" when empty)
  };

  explicit JsonWriter(Separators separators = Separators::Compact) : spaced_(separators == Separators::Spaced) {}

  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray(ArrayLayout layout = ArrayLayout::Inline);
  JsonWriter& endArray();
  // The name of the next member of the object being written.
  JsonWriter& key(std::string_view name);

  JsonWriter& string(std::string_view text);
  JsonWriter& number(double value);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  JsonWriter& integer(T value) {
    if constexpr (std::is_signed_v<T>) {
      return signedInteger(static_cast<int64_t>(value));
    } else {
      return unsignedInteger(static_cast<uint64_t>(value));
    }
  }
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // A number the caller has formatted itself (as JSON number text), written as it is.
  JsonWriter& rawNumber(std::string_view text);

  // The document so far; complete once the top-level value has ended.
  const std::string& text() const noexcept { return out_; }
  bool complete() const noexcept { return frames_.empty() && !out_.empty(); }
  // Moves the document out; the writer is then empty and may write another.
  std::string take();
  // Room for `bytes` of output, for a caller that knows roughly how much it writes.
  void reserve(std::size_t bytes) { out_.reserve(bytes); }

 private:
  struct Frame {
    bool object = false;
    bool onePerLine = false;
    bool keyed = false;  // an object's key is written and waits for its value
    std::size_t members = 0;
  };

  JsonWriter& signedInteger(int64_t value);
  JsonWriter& unsignedInteger(uint64_t value);
  // Writes what must come before a value (a separator, a line break) and checks it may come.
  void beforeValue();
  // ", " or "," between an object's members and an inline array's elements.
  void separator();

  std::string out_;
  std::vector<Frame> frames_;
  bool spaced_;
};

}  // namespace livemon::detail
