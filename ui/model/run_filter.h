#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <QString>
#include <QStringList>
#include <QVariant>

namespace livemon::ui {

// Thread-safety: a plain value type.
// One expression of a RunFilter: `key op value`, or plain text matched against the run's name.
struct RunFilterTerm {
  enum class Op { NameContains, Equal, NotEqual, Less, LessOrEqual, Greater, GreaterOrEqual };
  QString text;  // as typed
  QString key;
  Op op = Op::NameContains;
  QString value;
  std::optional<double> number;  // the value, when it reads as a number
};

// Immutable after construction: any thread.
// What the Runs panel's filter box asks, parsed: expressions separated by spaces or commas, all of
// which must hold. `lr>1e-3`, `optimizer=adam`, `batch!=64`, `loss.min<=0.3` compare a column
// (a config key or a summary column) with a value: numerically when both are numbers, otherwise
// as text ignoring case (= and != only; == is =). Anything without an operator is plain text the
// run's name must contain (ignoring case). A run that lacks the column fails the comparison.
// An expression that cannot be read (`lr>`, `>3`, `lr>adam`) is an error, listed by errors(),
// and takes no part; the caller says so rather than filter by what is left.
class RunFilter {
 public:
  explicit RunFilter(const QString& text = {});

  bool isEmpty() const noexcept { return terms_.empty() && errors_.empty(); }
  const std::vector<RunFilterTerm>& terms() const noexcept { return terms_; }
  // One message per expression that cannot be read, naming it.
  const QStringList& errors() const noexcept { return errors_; }

  // Whether a run passes every term: `name` is its name, `value(key)` its column `key` (an
  // invalid QVariant when it has none).
  bool matches(const QString& name, const std::function<QVariant(const QString& key)>& value) const;

  // Whether one comparison holds for a cell's value.
  static bool holds(const RunFilterTerm& term, const QVariant& cell);

 private:
  std::vector<RunFilterTerm> terms_;
  QStringList errors_;
};

}  // namespace livemon::ui
