#include <livemon/detail/json_writer.h>

#include <charconv>
#include <cmath>
#include <stdexcept>

#include <livemon/json_text.h>

namespace livemon::detail {

void appendExactDouble(std::string& out, double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  const std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  out += text;
  if (std::isfinite(value) && text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

JsonWriter& JsonWriter::beginObject() {
  beforeValue();
  out_ += '{';
  frames_.push_back(Frame{.object = true});
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  if (frames_.empty() || !frames_.back().object) throw std::logic_error("JsonWriter: endObject() outside an object");
  if (frames_.back().keyed) throw std::logic_error("JsonWriter: endObject() after a key without its value");
  frames_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::beginArray(ArrayLayout layout) {
  beforeValue();
  out_ += '[';
  frames_.push_back(Frame{.onePerLine = layout == ArrayLayout::OnePerLine});
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  if (frames_.empty() || frames_.back().object) throw std::logic_error("JsonWriter: endArray() outside an array");
  if (frames_.back().onePerLine && frames_.back().members > 0) out_ += '\n';
  frames_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (frames_.empty() || !frames_.back().object) throw std::logic_error("JsonWriter: key() outside an object");
  Frame& frame = frames_.back();
  if (frame.keyed) throw std::logic_error("JsonWriter: key() after a key without its value");
  if (frame.members++ > 0) separator();
  appendJsonString(out_, name);
  out_ += spaced_ ? ": " : ":";
  frame.keyed = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  beforeValue();
  appendJsonString(out_, text);
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  if (std::isnan(value)) return string("NaN");
  if (std::isinf(value)) return string(value > 0 ? "Infinity" : "-Infinity");
  beforeValue();
  appendExactDouble(out_, value);
  return *this;
}

JsonWriter& JsonWriter::signedInteger(int64_t value) {
  beforeValue();
  char buffer[24];
  out_.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  return *this;
}

JsonWriter& JsonWriter::unsignedInteger(uint64_t value) {
  beforeValue();
  char buffer[24];
  out_.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  beforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::rawNumber(std::string_view text) {
  beforeValue();
  out_ += text;
  return *this;
}

std::string JsonWriter::take() {
  std::string document = std::move(out_);
  out_.clear();
  frames_.clear();
  return document;
}

void JsonWriter::beforeValue() {
  if (frames_.empty()) {
    if (!out_.empty()) throw std::logic_error("JsonWriter: a second value after the top-level one");
    return;
  }
  Frame& frame = frames_.back();
  if (frame.object) {
    if (!frame.keyed) throw std::logic_error("JsonWriter: a value in an object without its key");
    frame.keyed = false;
    return;
  }
  if (frame.onePerLine) {
    out_ += frame.members++ > 0 ? ",\n" : "\n";
  } else if (frame.members++ > 0) {
    separator();
  }
}

void JsonWriter::separator() { out_ += spaced_ ? ", " : ","; }

}  // namespace livemon::detail
