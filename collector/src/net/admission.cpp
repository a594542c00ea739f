#include "admission.h"

#include <algorithm>
#include <iterator>

namespace ibc::collector {

bool AdmissionBudget::tryAcquire(std::size_t amount) {
  if (closed_ || !waiters_.empty() || !fits(amount)) return false;
  used_ += amount;
  return true;
}

void AdmissionBudget::release(std::size_t amount) {
  used_ -= std::min(used_, amount);
  while (!closed_ && !waiters_.empty() && fits(waiters_.front()->amount)) {
    AdmissionWaiter* w = waiters_.front();
    waiters_.pop_front();
    used_ += w->amount;
    w->granted = true;
    w->wake();
  }
}

void AdmissionBudget::close() {
  closed_ = true;
  // A woken waiter forgets itself (changing the list): wake a copy.
  const auto waiting = waiters_;
  for (AdmissionWaiter* w : waiting) w->wake();
}

void BudgetHold::give(std::size_t amount) {
  amount = std::min(amount, held_);
  held_ -= amount;
  budget_.release(amount);
}

void BudgetHold::releaseAll() {
  budget_.release(held_);
  held_ = 0;
}

HandshakeGate::HandshakeGate(std::size_t capacity, std::size_t per_source, std::size_t reserved)
    : capacity_(std::max<std::size_t>(1, capacity)),
      per_source_(std::max<std::size_t>(1, per_source)),
      reserved_(std::min(reserved, capacity_ - 1)) {}

bool HandshakeGate::tryAcquire(const std::string& source, bool known) {
  if (closed_ || !allowed(source, known)) return false;
  take(source);
  return true;
}

void HandshakeGate::release(const std::string& source) {
  if (used_ > 0) --used_;
  if (auto it = by_source_.find(source); it != by_source_.end() && --it->second == 0) {
    by_source_.erase(it);
  }
  for (auto it = waiters_.begin(); !closed_ && it != waiters_.end();) {
    AdmissionWaiter* w = *it;
    if (!allowed(w->source, w->known)) {
      ++it;
      continue;
    }
    take(w->source);
    w->granted = true;
    it = waiters_.erase(it);
    w->wake();
  }
}

void HandshakeGate::close() {
  closed_ = true;
  const auto waiting = waiters_;
  for (AdmissionWaiter* w : waiting) w->wake();
}

bool HandshakeGate::allowed(const std::string& source, bool known) const {
  if (used_ >= capacity_) return false;
  if (!known && used_ >= capacity_ - reserved_) return false;
  const auto it = by_source_.find(source);
  return it == by_source_.end() || it->second < per_source_;
}

void HandshakeGate::take(const std::string& source) {
  ++used_;
  ++by_source_[source];
}

bool KnownSources::known(const std::string& source, Clock::time_point now) const {
  const auto it = seen_.find(source);
  return it != seen_.end() && now - it->second < kKnownFor;
}

void KnownSources::remember(const std::string& source, Clock::time_point now) {
  if (seen_.size() >= max_sources_) {
    for (auto it = seen_.begin(); it != seen_.end();) {
      it = now - it->second >= kKnownFor ? seen_.erase(it) : std::next(it);
    }
    if (seen_.size() >= max_sources_) seen_.clear();
  }
  seen_[source] = now;
}

std::size_t UnauthenticatedSources::atLimit(const std::string& source) const {
  const auto it = by_source_.find(source);
  return it != by_source_.end() && it->second >= per_source_ ? it->second : 0;
}

void UnauthenticatedSources::authenticated(const std::string& source) {
  if (auto it = by_source_.find(source); it != by_source_.end() && --it->second == 0) {
    by_source_.erase(it);
  }
}

const std::string* UnauthenticatedSources::heaviest() const {
  const std::string* heaviest = nullptr;
  std::size_t most = 0;
  for (const auto& [source, n] : by_source_) {
    if (n > most) {
      most = n;
      heaviest = &source;
    }
  }
  return heaviest;
}

}  // namespace ibc::collector
