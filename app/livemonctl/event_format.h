#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <livemon/clock.h>
#include <livemon/transport/subscriber.h>

// How the livemonctl commands print what publishers send and what a recording holds: events,
// notices about sources and gaps, and what a subscriber had to skip, readably or as JSON. Every
// text a publisher or a file chose passes through printableText() (JSON escapes it anyway).
// Thread-safe: pure functions.
namespace livemon::livemonctl {

using transport::GapInfo;
using transport::HistoryStatus;
using transport::ReceivedEvent;
using transport::SourceChange;
using transport::SubscriberStats;

// One line, no newline: "17:46:18.123 demo@host:1234 livemon.Stat #12 step 340 key=value ..." in local
// time ("step N" when the event has a step: its own, else an int data field "step"),
// keys sorted, strings quoted, doubles to 6 significant digits; every text from the publisher
// passes through printableText(). The notices below are printable the same way.
std::string formatEventText(const ReceivedEvent& event);
// One JSON object, no newline: {"time": ISO-8601 UTC, "ts": ns, "name", "seq", "step" (when the
// event has one, as in the text form), "source": {...}, "endpoint", "history": true (only for events of a history
// answer), "data": {...}}. Doubles are exact and always carry a '.' or an exponent, so they
// stay apart from integers; NaN and ±Inf, which JSON
// lacks, are written as the strings "NaN", "Infinity" and "-Infinity".
std::string formatEventJson(const ReceivedEvent& event);
// The same, byte for byte, for an event lent by a Subscriber (SubscriberCallbacks::onEventView).
std::string formatEventText(const transport::ReceivedEventView& event);
std::string formatEventJson(const transport::ReceivedEventView& event);
std::string formatSourceChangeText(const SourceChange& change);
std::string formatSourceChangeJson(const SourceChange& change);  // {"notice": "joined"|"stale"|"alive"|"gone", ...}
std::string formatGapText(const GapInfo& gap);
std::string formatGapJson(const GapInfo& gap);  // {"notice": "gap", ...}
// How fetching an endpoint's history went, as one line: "history of EP: 1234 event(s) from
// 17:46:18 (older ones not kept)", or why there is none.
std::string formatHistoryText(const HistoryStatus& history);
// What a subscriber received and had to skip or forget, for the summary line of tail and record;
// peer-chosen text in it is escaped.
std::string formatReceiveSummary(const SubscriberStats& stats);

// `text` made safe to print on a terminal, for names, keys, runs and hosts a publisher or a file
// chose: control characters (C0, DEL, C1), Unicode line separators and bidirectional controls
// become \uXXXX escapes (\n, \r, \t, \" and \\ as in JSON), invalid UTF-8 becomes U+FFFD, and
// printable UTF-8 stays as it is. So no name can move the cursor, set the window title or fake
// a line.
std::string printableText(std::string_view text);
// The same between double quotes (a JSON string literal that is also safe to print).
std::string quotedPrintableText(std::string_view text);

// Not thread-safe: one owner at a time; one command's loop calls check(). Tells once per endpoint,
// on `err`, that nothing at all (not even a heartbeat) has come from it `after` the command
// started: "livemonctl tail: nothing received from EP yet; is a publisher running there?". A user
// who connects to the wrong port otherwise waits in silence. An `after` of 0 turns it off. A
// refused connection is told at once, with its reason, instead: "livemonctl tail: tcp://head:5555:
// the publisher requires CURVE: ...".
class QuietEndpointNotice {
 public:
  QuietEndpointNotice(std::string_view command, const Clock& clock, std::chrono::milliseconds after);
  void check(const transport::Subscriber& subscriber, std::ostream& err);

 private:
  std::string command_;
  const Clock& clock_;
  std::chrono::steady_clock::time_point due_;
  bool enabled_;
  std::set<std::string> told_;
  std::set<std::string> toldHandshakes_;  // endpoint '\n' reason, bounded by the reasons there are
};

// "17:46:18.123": the local time of day, as event lines start.
std::string localTimeOfDay(std::chrono::system_clock::time_point t);

// "2026-11-22T18:00:00.123456789Z", exact to the nanosecond over the whole range of `t`.
std::string isoUtc(std::chrono::system_clock::time_point t);

}  // namespace livemon::livemonctl
