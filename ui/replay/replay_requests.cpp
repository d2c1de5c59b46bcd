#include <livemon/ui/replay/replay_requests.h>

#include <algorithm>
#include <utility>

namespace livemon::ui {

void ReplayRequests::post(ReplayRequest request) {
  {
    std::lock_guard lock(mutex_);
    if (request.kind == ReplayRequest::Kind::Read) {
      const auto stale = std::remove_if(queue_.begin(), queue_.end(), [&](const ReplayRequest& queued) {
        return queued.kind == ReplayRequest::Kind::Read && queued.generation != request.generation;
      });
      inFlight_ -= static_cast<int>(queue_.end() - stale);
      queue_.erase(stale, queue_.end());
    }
    queue_.push_back(std::move(request));
    ++inFlight_;
  }
  wake_.notify_one();
}

std::optional<ReplayRequest> ReplayRequests::take() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (stopping_) return std::nullopt;
  ReplayRequest request = std::move(queue_.front());
  queue_.pop_front();
  return request;
}

void ReplayRequests::finished() {
  std::lock_guard lock(mutex_);
  --inFlight_;
}

bool ReplayRequests::busy() const {
  std::lock_guard lock(mutex_);
  return inFlight_ > 0;
}

void ReplayRequests::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
}

}  // namespace livemon::ui
