#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace livemon::ui {

// Thread-safety: a plain value type.
// A std::deque made by its first push_back. libstdc++'s deque allocates its map and a 512-byte
// node even while empty, about 650 bytes; a series keeps a few deques that most series never fill
// (runs of non-finite values, a rank group's edge ranks), and a run of 1 024 ranks has about
// 100 000 series (docs/benchmarks.md, issue 32 goal 6). Reading an empty one allocates nothing.
template <typename T>
class LazyDeque {
 public:
  LazyDeque() = default;
  LazyDeque(const LazyDeque& other) : items_(other.items_ ? std::make_unique<std::deque<T>>(*other.items_) : nullptr) {}
  LazyDeque& operator=(const LazyDeque& other) {
    if (this != &other) items_ = other.items_ ? std::make_unique<std::deque<T>>(*other.items_) : nullptr;
    return *this;
  }
  LazyDeque(LazyDeque&&) noexcept = default;
  LazyDeque& operator=(LazyDeque&&) noexcept = default;

  // The items, oldest first; an empty deque shared by every empty LazyDeque of T.
  const std::deque<T>& items() const noexcept { return items_ ? *items_ : empty_; }
  bool empty() const noexcept { return !items_ || items_->empty(); }
  std::size_t size() const noexcept { return items_ ? items_->size() : 0; }
  auto begin() const noexcept { return items().begin(); }
  auto end() const noexcept { return items().end(); }
  const T& front() const { return items_->front(); }
  const T& back() const { return items_->back(); }
  T& back() { return items_->back(); }

  void push_back(T item) {
    if (!items_) items_ = std::make_unique<std::deque<T>>();
    items_->push_back(std::move(item));
  }
  void pop_front() { items_->pop_front(); }
  // Gives the memory back too.
  void clear() noexcept { items_.reset(); }

 private:
  static inline const std::deque<T> empty_{};
  std::unique_ptr<std::deque<T>> items_;
};

}  // namespace livemon::ui
