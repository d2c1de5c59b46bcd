// JSON string literals: what users name (ranges, events, runs) must come out as JSON that parses
// and reads back as the same text, whatever bytes it holds.
#include <livemon/json_text.h>

#include <gtest/gtest.h>

#include <string>

namespace livemon {
namespace {

TEST(JsonString, QuotesAndEscapesWhatJsonRequires) {
  EXPECT_EQ(jsonString(""), "\"\"");
  EXPECT_EQ(jsonString("forward"), "\"forward\"");
  EXPECT_EQ(jsonString("grad \"sync\""), "\"grad \\\"sync\\\"\"");
  EXPECT_EQ(jsonString("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(jsonString("line\nnext\ttab\rret"), "\"line\\nnext\\ttab\\rret\"");
  EXPECT_EQ(jsonString(std::string("nul\0bell\a", 9)), "\"nul\\u0000bell\\u0007\"");
  EXPECT_EQ(jsonString("del\x7f"), "\"del\\u007f\"");
}

TEST(JsonString, KeepsValidUtf8AndReplacesEveryInvalidByte) {
  EXPECT_EQ(jsonString("\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5"), "\"\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5\"");
  const std::string replacement = "\xef\xbf\xbd";
  EXPECT_EQ(jsonString("a\xffz"), "\"a" + replacement + "z\"");                      // never a lead byte
  EXPECT_EQ(jsonString("\xc3"), "\"" + replacement + "\"");                          // cut short
  EXPECT_EQ(jsonString("\xc0\xaf"), "\"" + replacement + replacement + "\"");        // overlong '/'
  EXPECT_EQ(jsonString("\xed\xa0\x80"), "\"" + replacement + replacement + replacement + "\"");  // a surrogate
  EXPECT_EQ(jsonString("\xf4\x90\x80\x80"), "\"" + replacement + replacement + replacement + replacement + "\"");
  EXPECT_EQ(jsonString("\x80x"), "\"" + replacement + "x\"");  // a stray continuation byte
}

// Valid JSON either way, but a terminal or a log viewer showing the line acts on these: C1
// controls, the line and paragraph separators, and the bidirectional embeddings, overrides and
// isolates (which reorder what follows them). Every JSON output of livemon escapes them.
TEST(JsonString, EscapesWhatATerminalActsOn) {
  EXPECT_EQ(jsonString("a\xc2\x80\xc2\x85\xc2\x9fz"), "\"a\\u0080\\u0085\\u009fz\"");
  EXPECT_EQ(jsonString("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");
  EXPECT_EQ(jsonString("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae"),
            "\"\\u202a\\u202b\\u202c\\u202d\\u202e\"");
  EXPECT_EQ(jsonString("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"), "\"\\u2066\\u2067\\u2068\\u2069\"");
  // Their neighbours are printable and stay as they are.
  EXPECT_EQ(jsonString("\xc2\xa0\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa"),
            "\"\xc2\xa0\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\"");
}

TEST(JsonString, AppendsAfterWhatIsThere) {
  std::string out = "{\"name\":";
  appendJsonString(out, "step.data");
  out += '}';
  EXPECT_EQ(out, "{\"name\":\"step.data\"}");
}

}  // namespace
}  // namespace livemon
