#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <QString>

#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/dashboard/endpoint_health.h>

class QHBoxLayout;

namespace livemon::ui {

// Thread-safety: a plain value type.
// A status line and its tooltip.
struct StatusText {
  QString text;
  QString toolTip;
};

// The status bar's line for one endpoint (rich text): state, event rate, gaps, drops, protocol
// errors, coloured by the dashboard style: a finished run in a neutral colour, a silent or
// unreachable endpoint in the alarm colour.
// The status bar's standing line when no endpoint reports: the recording replayed (a non-empty
// path), else the folder of runs open, else how to connect. Empty while endpoints report: their
// labels say it.
QString standingNote(std::size_t endpoints, const QString& replayPath, const QString& folder = {});
// Why nothing can arrive from the endpoints that refuse this side (EndpointState::Refused), one
// plain-text line each ("tcp://head:5555: refused: …"), for the empty chart grid; empty if none.
QString refusedNote(const std::vector<EndpointHealth>& endpoints);

// An endpoint with a relay or many sources (EndpointHealth::summarized) reads as one summary
// instead: "relay tcp://head:5555 · 256 sources · 3 stale", then the rate, gaps and drops.
QString describeHealth(const EndpointHealth& health);
// Its tooltip (plain text): what the state means, and the publishers last heard there; for a
// summary, how many reach it through a relay and the first stale ones by name; then how its
// history came (EndpointHealth::history), if it was fetched.
QString describeHealthToolTip(const EndpointHealth& health);

// Shows `health` in `labels`, a rich-text label per endpoint (describeHealth) with the number of
// publishers in its tooltip (describeHealthToolTip); labels are reused while the number of endpoints stays the same.
void showEndpointHealth(QHBoxLayout& labels, const std::vector<EndpointHealth>& health);

// The toolbar's recording line (rich text): file, size, events, and what was not recorded.
// Empty while not recording.
StatusText recordingStatusText(const IngestWorker::RecordingStatus& status);

// The status bar's summary: charts, log rows held while paused (`heldLogRows`, set while
// paused), bad messages, forgotten topics and what the dashboard dropped.
StatusText summaryStatusText(const transport::SubscriberStats& stats, uint64_t droppedByDashboard,
                             std::size_t charts, std::optional<std::size_t> heldLogRows);

}  // namespace livemon::ui
