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
    Carried& carried = carry_.front();
    const bool last = carried.next + 1 == carried.pieces;
    IngestBatch piece = carried.pieces == 1 ? std::move(carried.batch) : nextPiece(carried);
    carriedRows_ -= piece.samples.size() + piece.log.size();
    applyBatch(piece, last);
    ingest_->staging().recycle(std::move(piece));
    if (!last) continue;
    if (carried.pieces > 1) ingest_->staging().recycle(std::move(carried.batch));
    carry_.pop_front();
  }
}

void Dashboard::carry(IngestBatch&& taken, std::size_t pieceRows) {
  if (taken.empty()) return;
  const std::size_t rows = taken.samples.size() + taken.log.size();
  carriedRows_ += rows;
  const std::size_t pieces = pieceRows == 0 || rows <= pieceRows ? 1 : (rows + pieceRows - 1) / pieceRows;
  carry_.push_back(Carried{std::move(taken), pieces, 0});
}

IngestBatch Dashboard::nextPiece(Carried& carried) {
  IngestBatch& taken = carried.batch;
  const std::size_t i = carried.next++;
  IngestBatch piece;
  if (i == 0) {
    piece.sources = std::move(taken.sources);
    piece.names = std::move(taken.names);
    piece.series = std::move(taken.series);
    piece.configs = std::move(taken.configs);
  }
  const std::size_t samples = taken.samples.size();
  const std::size_t logRows = taken.log.size();
  const auto cut = [&](std::size_t size, std::size_t at) {
    return static_cast<std::ptrdiff_t>(size * at / carried.pieces);
  };
  piece.samples.assign(taken.samples.begin() + cut(samples, i), taken.samples.begin() + cut(samples, i + 1));
  piece.log.assign(std::make_move_iterator(taken.log.begin() + cut(logRows, i)),
                   std::make_move_iterator(taken.log.begin() + cut(logRows, i + 1)));
  if (carried.next == carried.pieces) {
    piece.alerts = std::move(taken.alerts);
    piece.history = std::move(taken.history);
    piece.events = taken.events;
  }
  return piece;
}

}  // namespace livemon::ui
