#pragma once

// Admission control of the network layer (issue 25): what decides whether a connection, a
// handshake or a frame's bytes may go on now, kept apart from sockets and coroutines so it
// is tested without them. The server (server.cpp) owns one instance of each, uses them on
// its io thread only, and turns a waiter's wake-up into a timer cancel.

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <unordered_map>

namespace ibc::collector {

// One request for admission that could not be granted at once. The caller owns it, queues
// it with enqueue(), and is woken exactly once through `wake`: when it is granted
// (`granted` set, the units already taken) or when the gate closes. A caller that gives up
// (its deadline) calls forget().
struct AdmissionWaiter {
  std::size_t amount = 0;  // AdmissionBudget: units wanted
  std::string source;      // HandshakeGate: the source address
  bool known = false;      // HandshakeGate: the source completed a handshake recently
  std::function<void()> wake;
  bool granted = false;
};

// A FIFO budget of units (payload bytes) shared by the connections of the io thread. An
// amount larger than the whole budget is admitted when nothing else holds any, so a single
// large frame can always make progress.
class AdmissionBudget {
 public:
  explicit AdmissionBudget(std::size_t capacity) : capacity_(capacity) {}

  // Takes `amount` now when nobody waits ahead and it fits; false otherwise (then wait).
  bool tryAcquire(std::size_t amount);
  void enqueue(AdmissionWaiter& waiter) { waiters_.push_back(&waiter); }
  void forget(AdmissionWaiter& waiter) { waiters_.remove(&waiter); }
  // Returns units and grants the waiters at the front, in order, while they fit.
  void release(std::size_t amount);
  // Wakes every waiter ungranted; later acquisitions fail (drain).
  void close();
  bool closed() const { return closed_; }
  std::size_t used() const { return used_; }

 private:
  bool fits(std::size_t amount) const { return used_ == 0 || used_ + amount <= capacity_; }

  std::size_t capacity_;
  std::size_t used_ = 0;
  bool closed_ = false;
  std::list<AdmissionWaiter*> waiters_;
};

// Returns what a frame holds of a budget when it is done, whichever way it ends.
class BudgetHold {
 public:
  explicit BudgetHold(AdmissionBudget& budget) : budget_(budget) {}
  ~BudgetHold() { releaseAll(); }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;
  void add(std::size_t amount) { held_ += amount; }
  // Returns part of what is held (what a read did not fill).
  void give(std::size_t amount);
  AdmissionBudget& budget() { return budget_; }
  void releaseAll();

 private:
  AdmissionBudget& budget_;
  std::size_t held_ = 0;
};

// Handshake slots: at most `capacity` at once, at most `per_source` for one source address,
// and the last `reserved` slots only for sources that completed a handshake recently.
// Waiters are served in arrival order among those the limits allow.
class HandshakeGate {
 public:
  HandshakeGate(std::size_t capacity, std::size_t per_source, std::size_t reserved);

  // Whoever waits is not allowed a slot now (release() grants every waiter it can), so an
  // allowed newcomer takes one at once without passing anyone: a known agent is never
  // queued behind unknown sources that wait for the unreserved slots.
  bool tryAcquire(const std::string& source, bool known);
  void enqueue(AdmissionWaiter& waiter) { waiters_.push_back(&waiter); }
  void forget(AdmissionWaiter& waiter) { waiters_.remove(&waiter); }
  // Frees the slot of `source` and grants every waiter the limits now allow.
  void release(const std::string& source);
  void close();
  bool closed() const { return closed_; }
  std::size_t used() const { return used_; }

 private:
  bool allowed(const std::string& source, bool known) const;
  void take(const std::string& source);

  std::size_t capacity_;
  std::size_t per_source_;
  std::size_t reserved_;
  std::size_t used_ = 0;
  bool closed_ = false;
  std::unordered_map<std::string, std::size_t> by_source_;
  std::list<AdmissionWaiter*> waiters_;
};

// Sources that completed a handshake recently (they may use the reserved handshake slots).
// Bounded: when full, forgotten first are the expired, then everyone.
class KnownSources {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::minutes kKnownFor{10};
  static constexpr std::size_t kMaxSources = 1u << 16;

  explicit KnownSources(std::size_t max_sources = kMaxSources) : max_sources_(max_sources) {}
  bool known(const std::string& source, Clock::time_point now) const;
  void remember(const std::string& source, Clock::time_point now);
  std::size_t size() const { return seen_.size(); }

 private:
  std::size_t max_sources_;
  std::unordered_map<std::string, Clock::time_point> seen_;
};

// Connections not authenticated yet, counted per source address: a source at its limit is
// refused new connections, and at the connection limit the source holding the most loses
// its oldest (so a flood of silent sockets from some sources cannot keep agents out).
class UnauthenticatedSources {
 public:
  explicit UnauthenticatedSources(std::size_t per_source) : per_source_(per_source) {}
  // How many `source` holds when that is at the limit (refuse it), else 0.
  std::size_t atLimit(const std::string& source) const;
  void opened(const std::string& source) { ++by_source_[source]; }
  void authenticated(const std::string& source);
  // The source holding the most unauthenticated connections; nullptr when none.
  const std::string* heaviest() const;
  std::size_t perSource() const { return per_source_; }

 private:
  std::size_t per_source_;
  std::unordered_map<std::string, std::size_t> by_source_;
};

}  // namespace ibc::collector
