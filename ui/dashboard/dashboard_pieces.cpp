// How the Dashboard's refresh takes what is staged: a batch over DashboardOptions::refreshBudget's
// pieceRows is cut into pieces, applied over as many refreshes as their time budget needs, and what
// was applied goes back to the ingest thread to be freed there.
#include <livemon/ui/dashboard/dashboard.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>

namespace livemon::ui {

void Dashboard::applyStaged(std::size_t quota) {
  carry(ingest_->staging().take(), quota);
  const Clock& clock = options_.refreshBudget.clock != nullptr ? *options_.refreshBudget.clock : systemClock();
  const auto deadline = clock.now() + options_.refreshBudget.time;
  // At least one piece, so a refresh always makes progress; with a quota, more only within the time.
  for (bool first = true; !carry_.empty() && (first || quota == 0 || clock.now() < deadline); first = false) {
    Piece& piece = carry_.front();
    carriedRows_ -= piece.batch.samples.size() + piece.batch.log.size();
    applyBatch(piece.batch, piece.last);
    ingest_->staging().recycle(std::move(piece.batch));
    carry_.pop_front();
  }
}

void Dashboard::carry(IngestBatch&& taken, std::size_t pieceRows) {
  if (taken.empty()) return;
  const std::size_t samples = taken.samples.size();
  const std::size_t logRows = taken.log.size();
  carriedRows_ += samples + logRows;
  if (pieceRows == 0 || samples + logRows <= pieceRows) {
    carry_.push_back(Piece{std::move(taken), true});
    return;
  }
  // Samples and log rows are cut at the same fraction, so each piece holds about the same
  // events' of both; what must follow all of them (alerts, history notes) goes in the last.
  const std::size_t pieces = (samples + logRows + pieceRows - 1) / pieceRows;
  for (std::size_t i = 0; i < pieces; ++i) {
    Piece piece{IngestBatch{}, i + 1 == pieces};
    if (i == 0) {
      piece.batch.sources = std::move(taken.sources);
      piece.batch.names = std::move(taken.names);
      piece.batch.series = std::move(taken.series);
      piece.batch.configs = std::move(taken.configs);
    }
    const auto cut = [&](std::size_t size, std::size_t at) { return static_cast<std::ptrdiff_t>(size * at / pieces); };
    piece.batch.samples.assign(taken.samples.begin() + cut(samples, i), taken.samples.begin() + cut(samples, i + 1));
    piece.batch.log.assign(std::make_move_iterator(taken.log.begin() + cut(logRows, i)),
                           std::make_move_iterator(taken.log.begin() + cut(logRows, i + 1)));
    if (piece.last) {
      piece.batch.alerts = std::move(taken.alerts);
      piece.batch.history = std::move(taken.history);
      piece.batch.events = taken.events;
    }
    carry_.push_back(std::move(piece));
  }
  ingest_->staging().recycle(std::move(taken));
}

}  // namespace livemon::ui
