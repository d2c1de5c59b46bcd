#include <livemon/ui/model/run_filter.h>

#include <array>
#include <utility>

#include <QObject>
#include <QRegularExpression>

namespace livemon::ui {

namespace {

using Op = RunFilterTerm::Op;

// Two-character operators before their one-character prefixes.
constexpr std::array<std::pair<const char*, Op>, 7> kOperators{{{"!=", Op::NotEqual},
                                                                {">=", Op::GreaterOrEqual},
                                                                {"<=", Op::LessOrEqual},
                                                                {"==", Op::Equal},
                                                                {"=", Op::Equal},
                                                                {">", Op::Greater},
                                                                {"<", Op::Less}}};

bool isOrdering(Op op) { return op == Op::Less || op == Op::LessOrEqual || op == Op::Greater || op == Op::GreaterOrEqual; }

std::optional<double> numberOf(const QString& text) {
  bool ok = false;
  const double value = text.toDouble(&ok);
  return ok ? std::optional<double>(value) : std::nullopt;
}

// A cell's number: numbers are, and text that reads as one (a config value sent as a string).
std::optional<double> numberOf(const QVariant& cell) {
  switch (cell.typeId()) {
    case QMetaType::Double:
    case QMetaType::Float:
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::LongLong:
    case QMetaType::ULongLong:
      return cell.toDouble();
    case QMetaType::QString:
      return numberOf(cell.toString());
    default:
      return std::nullopt;
  }
}

}  // namespace

RunFilter::RunFilter(const QString& text) {
  static const QRegularExpression separators(QStringLiteral("[\\s,]+"));
  for (const QString& token : text.split(separators, Qt::SkipEmptyParts)) {
    RunFilterTerm term;
    term.text = token;
    qsizetype at = -1;
    qsizetype length = 0;
    for (const auto& [symbol, op] : kOperators) {
      const qsizetype found = token.indexOf(QLatin1String(symbol));
      // The leftmost operator; at one place, the longer one (listed first).
      if (found >= 0 && (at < 0 || found < at)) {
        at = found;
        length = static_cast<qsizetype>(qstrlen(symbol));
        term.op = op;
      }
    }
    if (at < 0) {
      term.value = token;
      terms_.push_back(std::move(term));
      continue;
    }
    term.key = token.left(at);
    term.value = token.mid(at + length);
    term.number = numberOf(term.value);
    if (term.key.isEmpty()) {
      errors_ << QObject::tr("“%1”: no column before the operator").arg(token);
    } else if (term.value.isEmpty()) {
      errors_ << QObject::tr("“%1”: no value after the operator").arg(token);
    } else if (isOrdering(term.op) && !term.number) {
      errors_ << QObject::tr("“%1”: %2 compares numbers").arg(token, token.mid(at, length));
    } else {
      terms_.push_back(std::move(term));
    }
  }
}

bool RunFilter::holds(const RunFilterTerm& term, const QVariant& cell) {
  if (!cell.isValid()) return false;
  const std::optional<double> number = numberOf(cell);
  if (term.number && number) {
    switch (term.op) {
      case Op::Equal: return *number == *term.number;
      case Op::NotEqual: return *number != *term.number;
      case Op::Less: return *number < *term.number;
      case Op::LessOrEqual: return *number <= *term.number;
      case Op::Greater: return *number > *term.number;
      case Op::GreaterOrEqual: return *number >= *term.number;
      case Op::NameContains: break;
    }
    return false;
  }
  const bool equal = cell.toString().compare(term.value, Qt::CaseInsensitive) == 0;
  if (term.op == Op::Equal) return equal;
  if (term.op == Op::NotEqual) return !equal;
  return false;  // an ordering of text (or of a number against text)
}

bool RunFilter::matches(const QString& name, const std::function<QVariant(const QString& key)>& value) const {
  for (const RunFilterTerm& term : terms_) {
    const bool ok = term.op == Op::NameContains ? name.contains(term.value, Qt::CaseInsensitive) : holds(term, value(term.key));
    if (!ok) return false;
  }
  return true;
}

}  // namespace livemon::ui
