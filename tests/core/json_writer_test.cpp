// The JSON writer every --json output and Chrome trace goes through: what it writes must parse
// (checked by an independent parser, nlohmann-json), read back as what was written, and keep the
// bytes the hand-built outputs had.
#include <livemon/detail/json_writer.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace livemon::detail {
namespace {

using Json = nlohmann::json;

TEST(JsonWriter, WritesNestedObjectsAndArraysCompactly) {
  JsonWriter json;
  json.beginObject()
      .key("name").string("loss")
      .key("data").beginObject().key("x").integer(1).key("ok").boolean(true).key("none").null().endObject()
      .key("list").beginArray().integer(1).beginArray().endArray().beginObject().endObject().string("s").endArray()
      .endObject();
  EXPECT_TRUE(json.complete());
  EXPECT_EQ(json.text(), R"({"name":"loss","data":{"x":1,"ok":true,"none":null},"list":[1,[],{},"s"]})");
  const Json parsed = Json::parse(json.text());
  EXPECT_EQ(parsed["data"]["x"], 1);
  EXPECT_TRUE(parsed["data"]["none"].is_null());
  EXPECT_EQ(parsed["list"].size(), 4u);
}

// `livemonctl info --json` has always been spaced.
TEST(JsonWriter, SpacedSeparators) {
  JsonWriter json(JsonWriter::Separators::Spaced);
  json.beginObject().key("a").integer(1).key("b").beginArray().integer(2).integer(3).endArray().key("c").beginObject()
      .endObject().endObject();
  EXPECT_EQ(json.text(), R"({"a": 1, "b": [2, 3], "c": {}})");
}

// Chrome traces: one event per line, so a large trace stays readable and diffable.
TEST(JsonWriter, OneElementPerLine) {
  JsonWriter json;
  json.beginObject().key("events").beginArray(JsonWriter::ArrayLayout::OnePerLine);
  json.beginObject().key("a").integer(1).endObject();
  json.beginObject().key("b").integer(2).endObject();
  json.endArray().key("empty").beginArray(JsonWriter::ArrayLayout::OnePerLine).endArray().endObject();
  EXPECT_EQ(json.text(), "{\"events\":[\n{\"a\":1},\n{\"b\":2}\n],\"empty\":[]}");
  EXPECT_EQ(Json::parse(json.text())["events"][1]["b"], 2);
}

TEST(JsonWriter, EscapesKeysAndStringsAndReplacesInvalidUtf8) {
  const std::string control("nul\0bell\a\x1f del\x7f", 15);
  JsonWriter json;
  json.beginObject()
      .key("q\"b\\s").string("line\nnext\ttab\rret")
      .key("control").string(control)
      .key("utf8").string("\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5")
      .key("bad \xff").string("a\xffz\xc3")
      .endObject();
  EXPECT_EQ(json.text(),
            "{\"q\\\"b\\\\s\":\"line\\nnext\\ttab\\rret\",\"control\":\"nul\\u0000bell\\u0007\\u001f del\\u007f\","
            "\"utf8\":\"\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5\",\"bad \xef\xbf\xbd\":\"a\xef\xbf\xbdz\xef\xbf\xbd\"}");
  const Json parsed = Json::parse(json.text());
  EXPECT_EQ(parsed["q\"b\\s"], "line\nnext\ttab\rret");
  EXPECT_EQ(parsed["control"], control) << "reads back as the same bytes";
  EXPECT_EQ(parsed["bad \xef\xbf\xbd"], "a\xef\xbf\xbdz\xef\xbf\xbd");
}

// Doubles stay apart from integers (".0"), exact, and NaN and ±Inf become strings JSON can hold.
TEST(JsonWriter, NumbersAsTheOutputsHaveAlwaysWrittenThem) {
  const auto write = [](auto value) {
    JsonWriter json;
    if constexpr (std::is_same_v<decltype(value), double>) {
      json.number(value);
    } else {
      json.integer(value);
    }
    return json.take();
  };
  EXPECT_EQ(write(60.0), "60.0");
  EXPECT_EQ(write(0.5), "0.5");
  EXPECT_EQ(write(0.1), "0.1");
  EXPECT_EQ(write(-0.0), "-0.0");
  EXPECT_EQ(write(1e300), "1e+300");
  EXPECT_EQ(write(5e-324), "5e-324");
  EXPECT_EQ(write(123456789012.0), "123456789012.0");
  EXPECT_EQ(write(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(write(std::numeric_limits<double>::infinity()), "\"Infinity\"");
  EXPECT_EQ(write(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
  EXPECT_EQ(write(std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(write(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(write(uint32_t{7}), "7");
  EXPECT_EQ(write(int{-7}), "-7");

  // Every double reads back exactly.
  for (const double value : {0.1, 1.0 / 3.0, 6.02214076e23, -1e-300, 5e-324}) {
    EXPECT_EQ(Json::parse(write(value)).get<double>(), value) << write(value);
  }
  EXPECT_EQ(Json::parse(write(std::numeric_limits<uint64_t>::max())).get<uint64_t>(),
            std::numeric_limits<uint64_t>::max());
}

TEST(JsonWriter, ExactDoubleText) {
  std::string out;
  appendExactDouble(out, 60.0);
  out += ' ';
  appendExactDouble(out, 2.5e-8);
  out += ' ';
  appendExactDouble(out, std::numeric_limits<double>::infinity());
  EXPECT_EQ(out, "60.0 2.5e-08 inf");
}

TEST(JsonWriter, RawNumbersAreWrittenAsGiven) {
  JsonWriter json;
  json.beginArray().rawNumber("1000.500").rawNumber("-0.250").endArray();
  EXPECT_EQ(json.text(), "[1000.500,-0.250]");
}

TEST(JsonWriter, TakeStartsOver) {
  JsonWriter json;
  json.beginObject().endObject();
  EXPECT_EQ(json.take(), "{}");
  EXPECT_FALSE(json.complete());
  json.string("again");
  EXPECT_EQ(json.take(), "\"again\"");
}

TEST(JsonWriter, MisuseThrows) {
  EXPECT_THROW(JsonWriter().key("outside"), std::logic_error);
  EXPECT_THROW(JsonWriter().endObject(), std::logic_error);
  EXPECT_THROW(JsonWriter().endArray(), std::logic_error);
  EXPECT_THROW(JsonWriter().beginObject().integer(1), std::logic_error) << "a value needs its key";
  EXPECT_THROW(JsonWriter().beginObject().key("a").key("b"), std::logic_error);
  EXPECT_THROW(JsonWriter().beginObject().key("a").endObject(), std::logic_error);
  EXPECT_THROW(JsonWriter().beginObject().endArray(), std::logic_error);
  EXPECT_THROW(JsonWriter().beginArray().endObject(), std::logic_error);
  EXPECT_THROW(JsonWriter().beginArray().key("a"), std::logic_error);
  EXPECT_THROW(JsonWriter().integer(1).integer(2), std::logic_error) << "one value at the top";
  JsonWriter open;
  open.beginObject();
  EXPECT_FALSE(open.complete());
}

}  // namespace
}  // namespace livemon::detail
