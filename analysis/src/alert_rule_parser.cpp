// Alert rules as text: the parser of `livemonctl watch --rule` and the dashboard's rules, and the
// names of what a rule holds. The engine that applies them is alert_rules.cpp.
#include <livemon/alert_rules.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <livemon/json_text.h>

namespace livemon {

namespace {

bool isBlank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool isOperatorChar(char c) noexcept { return c == '<' || c == '>' || c == '=' || c == '!'; }

bool equalsIgnoringCase(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Not thread-safe: one parse.
// Reads a rule's text front to back; every failure names the byte offset it happened at.
class RuleParser {
 public:
  explicit RuleParser(std::string_view text) : text_(text) {}

  std::optional<AlertRule> parse(AlertRuleError& error) {
    error_ = &error;
    if (text_.size() > kMaxAlertRuleBytes) {
      return fail(kMaxAlertRuleBytes, "a rule is at most " + std::to_string(kMaxAlertRuleBytes) + " bytes long");
    }
    std::size_t end = text_.size();
    while (end > 0 && isBlank(text_[end - 1])) --end;
    text_ = text_.substr(0, end);
    skipBlanks();
    if (atEnd()) return fail(pos_, "empty rule: expected nan, silent, loss or KEY > NUMBER");
    AlertRule rule;
    rule.text = std::string(text_.substr(pos_));

    const bool quoted = text_[pos_] == '"';
    std::string key;
    if (quoted) {
      if (!quotedKey(key)) return std::nullopt;
    } else {
      key = std::string(bareToken());
      if (key.empty()) return fail(pos_, "expected a key before the comparison");
    }
    skipBlanks();

    if (!quoted && !atEnd() && !isOperatorChar(text_[pos_]) && equalsIgnoringCase(key, "silent")) {
      rule.kind = AlertRuleKind::Silent;
      if (!duration(rule)) return std::nullopt;
      return finish(std::move(rule), "unexpected text after the duration");
    }
    if (atEnd()) {
      if (!quoted) {
        if (equalsIgnoringCase(key, "nan")) return finishBuiltIn(std::move(rule), AlertRuleKind::NotFinite);
        if (equalsIgnoringCase(key, "loss")) return finishBuiltIn(std::move(rule), AlertRuleKind::Loss);
        if (equalsIgnoringCase(key, "silent")) return finishBuiltIn(std::move(rule), AlertRuleKind::Silent);
      }
      return fail(pos_, "expected a comparison (>, >=, <, <=) after the key, or one of nan, silent, loss");
    }
    if (!quoted && !isOperatorChar(text_[pos_]) && (equalsIgnoringCase(key, "nan") || equalsIgnoringCase(key, "loss"))) {
      return fail(pos_, "\"" + key + "\" takes nothing after it");
    }

    rule.kind = AlertRuleKind::Threshold;
    rule.key = std::move(key);
    if (!comparison(rule)) return std::nullopt;
    skipBlanks();
    if (!threshold(rule)) return std::nullopt;
    skipBlanks();
    if (!atEnd()) {
      const std::size_t forAt = pos_;
      if (!equalsIgnoringCase(bareToken(), "for")) return fail(forAt, "expected \"for N\" or the end of the rule");
      skipBlanks();
      if (!consecutive(rule)) return std::nullopt;
      skipBlanks();
      if (!atEnd()) {
        const std::size_t unitAt = pos_;
        const std::string_view unit = bareToken();
        bool known = false;
        for (std::string_view word : {"value", "values", "window", "windows", "time", "times"}) known |= equalsIgnoringCase(unit, word);
        if (!known) return fail(unitAt, "expected the end of the rule after \"for N\"");
      }
    }
    return finish(std::move(rule), "expected the end of the rule");
  }

 private:
  bool atEnd() const noexcept { return pos_ >= text_.size(); }
  void skipBlanks() noexcept {
    while (!atEnd() && isBlank(text_[pos_])) ++pos_;
  }
  std::string_view bareToken() noexcept {
    const std::size_t start = pos_;
    while (!atEnd() && !isBlank(text_[pos_]) && !isOperatorChar(text_[pos_]) && text_[pos_] != '"') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // A run of anything but blanks (numbers, durations).
  std::string_view word() noexcept {
    const std::size_t start = pos_;
    while (!atEnd() && !isBlank(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::nullopt_t fail(std::size_t position, std::string reason) {
    error_->position = position;
    error_->reason = std::move(reason);
    return std::nullopt;
  }

  std::optional<AlertRule> finishBuiltIn(AlertRule rule, AlertRuleKind kind) {
    rule.kind = kind;
    return rule;
  }
  std::optional<AlertRule> finish(AlertRule rule, const char* reasonIfMore) {
    skipBlanks();
    if (!atEnd()) return fail(pos_, reasonIfMore);
    return rule;
  }

  bool quotedKey(std::string& key) {
    const std::size_t open = pos_++;
    while (!atEnd()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        if (!key.empty()) return true;
        fail(open, "the quoted key is empty");
        return false;
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size() || (text_[pos_ + 1] != '"' && text_[pos_ + 1] != '\\')) {
          fail(pos_, "in a quoted key only \\\" and \\\\ are escapes");
          return false;
        }
        key += text_[pos_ + 1];
        pos_ += 2;
        continue;
      }
      key += c;
      ++pos_;
    }
    fail(open, "the quoted key has no closing quote");
    return false;
  }

  bool comparison(AlertRule& rule) {
    const std::size_t at = pos_;
    std::size_t length = 0;
    while (pos_ + length < text_.size() && isOperatorChar(text_[pos_ + length])) ++length;
    const std::string_view op = text_.substr(at, length);
    if (op == ">") {
      rule.comparison = AlertComparison::Greater;
    } else if (op == ">=") {
      rule.comparison = AlertComparison::GreaterOrEqual;
    } else if (op == "<") {
      rule.comparison = AlertComparison::Less;
    } else if (op == "<=") {
      rule.comparison = AlertComparison::LessOrEqual;
    } else if (op.empty()) {
      fail(at, "expected a comparison (>, >=, <, <=) after the key");
      return false;
    } else {
      fail(at, "unknown comparison \"" + std::string(op) + "\": use >, >=, < or <=");
      return false;
    }
    pos_ += length;
    return true;
  }

  // A decimal number filling `text`, with an optional sign; nothing when it is not one.
  static std::optional<double> number(std::string_view text, std::string* why) {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      *why = "out of range for a double";
      return std::nullopt;
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      *why = "not a number";
      return std::nullopt;
    }
    if (!std::isfinite(value)) {
      *why = "not a finite number";
      return std::nullopt;
    }
    return value;
  }

  bool threshold(AlertRule& rule) {
    const std::size_t at = pos_;
    const std::string_view text = word();
    if (text.empty()) {
      fail(at, "expected a number after " + std::string(alertComparisonText(rule.comparison)));
      return false;
    }
    std::string why;
    const std::optional<double> value = number(text, &why);
    if (!value) {
      fail(at, "the threshold \"" + std::string(text) + "\" is " + why);
      return false;
    }
    rule.threshold = *value;
    return true;
  }

  bool consecutive(AlertRule& rule) {
    const std::size_t at = pos_;
    const std::string_view text = bareToken();
    uint64_t count = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > kMaxAlertConsecutive) {
      fail(at, "expected a count of values from 1 to " + std::to_string(kMaxAlertConsecutive) + " after \"for\"");
      return false;
    }
    rule.consecutive = static_cast<uint32_t>(count);
    return true;
  }

  bool duration(AlertRule& rule) {
    const std::size_t at = pos_;
    std::string_view text = word();
    double unitMs = 1000.0;
    std::size_t digits = text.size();
    while (digits > 0 && ((text[digits - 1] >= 'a' && text[digits - 1] <= 'z') || (text[digits - 1] >= 'A' && text[digits - 1] <= 'Z'))) {
      --digits;
    }
    const std::string_view unit = text.substr(digits);
    if (unit.empty() || equalsIgnoringCase(unit, "s")) {
      unitMs = 1000.0;
    } else if (equalsIgnoringCase(unit, "ms")) {
      unitMs = 1.0;
    } else if (equalsIgnoringCase(unit, "m") || equalsIgnoringCase(unit, "min")) {
      unitMs = 60'000.0;
    } else if (equalsIgnoringCase(unit, "h")) {
      unitMs = 3'600'000.0;
    } else {
      fail(at + digits, "unknown unit \"" + std::string(unit) + "\": use ms, s, m or h");
      return false;
    }
    std::string why;
    const std::optional<double> value = number(text.substr(0, digits), &why);
    if (!value) {
      fail(at, "the duration \"" + std::string(text) + "\" is " + (digits == 0 ? std::string("missing its number") : why));
      return false;
    }
    const double ms = *value * unitMs;
    if (!(ms >= static_cast<double>(kMinSilentAfter.count()) - 0.5 && ms <= static_cast<double>(kMaxSilentAfter.count()))) {
      fail(at, "the duration must be from 1ms to 7 days");
      return false;
    }
    rule.silentAfter = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(ms)));
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  AlertRuleError* error_ = nullptr;
};

}  // namespace

std::string_view alertRuleKindName(AlertRuleKind kind) noexcept {
  switch (kind) {
    case AlertRuleKind::NotFinite: return "nan";
    case AlertRuleKind::Silent: return "silent";
    case AlertRuleKind::Loss: return "loss";
    case AlertRuleKind::Threshold: return "threshold";
  }
  return "?";
}

std::string_view alertComparisonText(AlertComparison comparison) noexcept {
  switch (comparison) {
    case AlertComparison::Greater: return ">";
    case AlertComparison::GreaterOrEqual: return ">=";
    case AlertComparison::Less: return "<";
    case AlertComparison::LessOrEqual: return "<=";
  }
  return "?";
}

bool AlertRule::crosses(double value) const noexcept {
  switch (comparison) {
    case AlertComparison::Greater: return value > threshold;
    case AlertComparison::GreaterOrEqual: return value >= threshold;
    case AlertComparison::Less: return value < threshold;
    case AlertComparison::LessOrEqual: return value <= threshold;
  }
  return false;
}

std::optional<AlertRule> parseAlertRule(std::string_view text, AlertRuleError* error) {
  AlertRuleError ignored;
  return RuleParser(text).parse(error != nullptr ? *error : ignored);
}

std::string describeAlertRuleError(std::string_view text, const AlertRuleError& error) {
  return "rule " + jsonString(text) + ": at column " + std::to_string(error.position + 1) + ": " + error.reason;
}

AlertRule parseAlertRuleOrThrow(std::string_view text) {
  AlertRuleError error;
  std::optional<AlertRule> rule = parseAlertRule(text, &error);
  if (!rule) throw std::invalid_argument(describeAlertRuleError(text, error));
  return std::move(*rule);
}

}  // namespace livemon
