#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/json_text.h>
#include <livemon/transport/subscriber.h>

// `livemonctl tail`: prints what publishers send, readably or as JSON lines.
namespace livemon::transport {

struct TailOptions {
  std::vector<std::string> endpoints{std::string(kDefaultEndpoint)};
  std::vector<std::string> filters;  // event-name prefixes; empty prints every event
  bool json = false;
  std::chrono::milliseconds staleAfter{3000};
  uint64_t maxEvents = 0;  // stop after this many events; 0: until stopped
};

// Subscribes to every endpoint and prints each event, each source joining, going stale, coming
// back or saying goodbye, and each gap, to `out` until `stop` becomes true or maxEvents have been
// printed; then a summary to `err`. Returns the process exit code (0).
// Throws TransportError naming an endpoint that cannot be used.
int runTail(const TailOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// One line, no newline: "17:46:18.123 demo@host:1234 livemon.Stat #12 key=value ..." in local time,
// keys sorted, strings quoted, doubles to 6 significant digits; every text from the publisher
// passes through printableText(). The notices below are printable the same way.
std::string formatEventText(const ReceivedEvent& event);
// One JSON object, no newline: {"time": ISO-8601 UTC, "ts": ns, "name", "seq", "source": {...},
// "endpoint", "data": {...}}. Doubles are exact and always carry a '.' or an exponent, so they
// stay apart from integers; NaN and ±Inf, which JSON
// lacks, are written as the strings "NaN", "Infinity" and "-Infinity".
std::string formatEventJson(const ReceivedEvent& event);
std::string formatSourceChangeText(const SourceChange& change);
std::string formatSourceChangeJson(const SourceChange& change);  // {"notice": "joined"|"stale"|"alive"|"gone", ...}
std::string formatGapText(const GapInfo& gap);
std::string formatGapJson(const GapInfo& gap);  // {"notice": "gap", ...}
// What a subscriber received and had to skip or forget, for the summary line of tail and record;
// peer-chosen text in it is escaped.
std::string formatReceiveSummary(const SubscriberStats& stats);

// `text` as a JSON string literal, quotes included; invalid UTF-8 becomes U+FFFD.
using livemon::jsonString;

// `text` made safe to print on a terminal, for names, keys, runs and hosts a publisher or a file
// chose: control characters (C0, DEL, C1), Unicode line separators and bidirectional controls
// become \uXXXX escapes (\n, \r, \t, \" and \\ as in JSON), invalid UTF-8 becomes U+FFFD, and
// printable UTF-8 stays as it is. So no name can move the cursor, set the window title or fake
// a line.
std::string printableText(std::string_view text);
// The same between double quotes (a JSON string literal that is also safe to print).
std::string quotedPrintableText(std::string_view text);

}  // namespace livemon::transport
