#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>

namespace livemon::ui {

// Thread-safety: a plain value type.
// A queue of plain values in one ring-shaped allocation, for a SeriesStore's samples and buckets:
// pushed at the back, taken from the front, read by index, searched with std::lower_bound. It
// allocates nothing while empty and grows by doubling up to `limit` (the most its owner keeps),
// so a full ring is one block of about `limit` items. A std::deque, which it replaces, allocates a
// 512-byte node and its map even while empty and a node per 512 bytes after: a run of 1 024 ranks
// keeps some 80 000 series of 16 samples and 8 buckets each, about 190 MiB in deques against
// about 100 MiB in rings (docs/benchmarks.md, issue 32 goal 6).
template <typename T>
class PointRing {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  // Thread-safety: a plain value type.
  // A random-access position; invalidated by any change to the ring.
  template <bool Const>
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;
    using Ring = std::conditional_t<Const, const PointRing, PointRing>;

    Iterator() = default;
    Iterator(Ring* ring, std::size_t index) : ring_(ring), index_(index) {}

    reference operator*() const { return (*ring_)[index_]; }
    pointer operator->() const { return &(*ring_)[index_]; }
    reference operator[](difference_type n) const { return (*ring_)[index_ + static_cast<std::size_t>(n)]; }
    Iterator& operator++() { ++index_; return *this; }
    Iterator& operator--() { --index_; return *this; }
    Iterator operator++(int) { Iterator was = *this; ++index_; return was; }
    Iterator operator--(int) { Iterator was = *this; --index_; return was; }
    Iterator& operator+=(difference_type n) { index_ += static_cast<std::size_t>(n); return *this; }
    Iterator& operator-=(difference_type n) { index_ -= static_cast<std::size_t>(n); return *this; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator& a, const Iterator& b) {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.index_ == b.index_; }
    friend auto operator<=>(const Iterator& a, const Iterator& b) { return a.index_ <=> b.index_; }

    std::size_t index() const noexcept { return index_; }

   private:
    Ring* ring_ = nullptr;
    std::size_t index_ = 0;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  // `limit`: the most items the owner keeps (at least 1); growing stops doubling there, and goes
  // on doubling only for an owner that keeps more after all.
  explicit PointRing(std::size_t limit = 4096) : limit_(static_cast<uint32_t>(std::clamp<std::size_t>(limit, 1, kMaxLimit))) {}
  PointRing(const PointRing& other) : limit_(other.limit_) { copyFrom(other); }
  PointRing& operator=(const PointRing& other) {
    if (this != &other) {
      limit_ = other.limit_;
      copyFrom(other);
    }
    return *this;
  }
  PointRing(PointRing&& other) noexcept
      : items_(std::move(other.items_)), capacity_(other.capacity_), head_(other.head_), size_(other.size_), limit_(other.limit_) {
    other.capacity_ = other.head_ = other.size_ = 0;
  }
  PointRing& operator=(PointRing&& other) noexcept {
    if (this != &other) {
      items_ = std::move(other.items_);
      capacity_ = other.capacity_;
      head_ = other.head_;
      size_ = other.size_;
      limit_ = other.limit_;
      other.capacity_ = other.head_ = other.size_ = 0;
    }
    return *this;
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // The items the allocation holds (0 while nothing was ever pushed, or after clear()).
  std::size_t capacity() const noexcept { return capacity_; }

  T& operator[](std::size_t i) noexcept { return items_[slot(i)]; }
  const T& operator[](std::size_t i) const noexcept { return items_[slot(i)]; }
  T& front() noexcept { return (*this)[0]; }
  const T& front() const noexcept { return (*this)[0]; }
  T& back() noexcept { return (*this)[size_ - 1]; }
  const T& back() const noexcept { return (*this)[size_ - 1]; }

  iterator begin() noexcept { return iterator(this, 0); }
  iterator end() noexcept { return iterator(this, size_); }
  const_iterator begin() const noexcept { return const_iterator(this, 0); }
  const_iterator end() const noexcept { return const_iterator(this, size_); }

  void push_back(const T& item) {
    if (size_ == capacity_) grow();
    items_[slot(size_)] = item;
    ++size_;
  }
  // Puts `item` before the item at `index` (size() appends), moving the later ones back by one.
  void insert(std::size_t index, const T& item) {
    index = std::min<std::size_t>(index, size_);
    push_back(item);
    for (std::size_t i = size_ - 1; i > index; --i) (*this)[i] = (*this)[i - 1];
    (*this)[index] = item;
  }
  // Drops the oldest `n` items (all, when n >= size()).
  void popFront(std::size_t n) noexcept {
    n = std::min<std::size_t>(n, size_);
    head_ = static_cast<uint32_t>(slot(n));
    size_ -= static_cast<uint32_t>(n);
  }
  // Keeps the oldest `n` items (all, when n >= size()).
  void truncate(std::size_t n) noexcept { size_ = static_cast<uint32_t>(std::min<std::size_t>(n, size_)); }
  // Forgets every item and gives the memory back.
  void clear() noexcept {
    items_.reset();
    capacity_ = head_ = size_ = 0;
  }

 private:
  static constexpr std::size_t kMaxLimit = std::size_t{1} << 30;
  static constexpr uint32_t kFirstCapacity = 4;

  std::size_t slot(std::size_t i) const noexcept {
    const std::size_t at = head_ + i;
    return at >= capacity_ ? at - capacity_ : at;
  }
  void grow() {
    uint32_t next = capacity_ == 0 ? std::min(kFirstCapacity, limit_) : capacity_ * 2;
    // Doubling stops at the limit, unless the ring is already there.
    if (capacity_ < limit_) next = std::min(next, limit_);
    std::unique_ptr<T[]> moved(new T[next]);
    for (std::size_t i = 0; i < size_; ++i) moved[i] = (*this)[i];
    items_ = std::move(moved);
    capacity_ = next;
    head_ = 0;
  }
  void copyFrom(const PointRing& other) {
    items_.reset(other.size_ == 0 ? nullptr : new T[other.size_]);
    for (std::size_t i = 0; i < other.size_; ++i) items_[i] = other[i];
    capacity_ = size_ = other.size_;
    head_ = 0;
  }

  std::unique_ptr<T[]> items_;
  uint32_t capacity_ = 0;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
  uint32_t limit_;
};

}  // namespace livemon::ui
