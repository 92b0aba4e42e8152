#include "stream_prefetcher.hpp"

#include <algorithm>
#include <cstring>

namespace tessera {

StreamPrefetcher::StreamPrefetcher(std::vector<StreamCallback> callbacks,
                                   const std::vector<uint64_t>& start,
                                   std::function<void(size_t, uint64_t)> onReady)
    : onReady_(std::move(onReady)) {
  for (auto& cb : callbacks) {
    const uint64_t at = streams_.size() < start.size() ? start[streams_.size()] : 0;
    streams_.push_back(Stream{std::move(cb), {}, at, at, nullptr});
  }
  thread_ = std::thread([this] { loop(); });
}

StreamPrefetcher::~StreamPrefetcher() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void StreamPrefetcher::prefetch(size_t s, uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    Stream& st = streams_.at(s);
    st.target = std::max(st.target, st.taken + bytes);
  }
  work_.notify_all();
}

bool StreamPrefetcher::take(size_t s, std::span<uint8_t> out, uint64_t* missBytes,
                            const std::function<void()>& onWait) {
  std::unique_lock lock(mutex_);
  Stream& st = streams_.at(s);
  const uint64_t end = st.taken + out.size();
  *missBytes = end > st.target ? end - std::max(st.target, st.taken) : 0;
  st.target = std::max(st.target, end);
  bool waited = false;
  if (st.produced() < end && !st.error) {
    waited = true;
    work_.notify_all();
    if (onWait) {
      lock.unlock();
      onWait();
      lock.lock();
    }
    done_.wait(lock, [&] { return st.produced() >= end || st.error; });
  }
  if (st.produced() < end) std::rethrow_exception(st.error);
  std::memcpy(out.data(), st.ready.data(), out.size());
  st.ready.erase(st.ready.begin(), st.ready.begin() + static_cast<long>(out.size()));
  st.taken = end;
  return waited;
}

void StreamPrefetcher::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    Stream* next = nullptr;
    work_.wait(lock, [&] {
      if (stop_) return true;
      for (Stream& st : streams_) {
        if (st.callback && !st.error && st.produced() < st.target) {
          next = &st;
          return true;
        }
      }
      return false;
    });
    if (stop_) return;
    // Produce outside the lock so take() and prefetch() of other streams are never held up.
    const uint64_t offset = next->produced();
    std::vector<uint8_t> chunk(next->target - offset);
    lock.unlock();
    std::exception_ptr error;
    try {
      next->callback(offset, chunk);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      next->error = error;
    } else {
      next->ready.insert(next->ready.end(), chunk.begin(), chunk.end());
    }
    done_.notify_all();
    if (onReady_ && !error) {
      const size_t s = static_cast<size_t>(next - streams_.data());
      const uint64_t end = next->produced();
      lock.unlock();
      onReady_(s, end);
      lock.lock();
    }
  }
}

}  // namespace tessera
