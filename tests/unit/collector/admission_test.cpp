#include "net/admission.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ibc::collector {
namespace {

using Clock = std::chrono::steady_clock;

// A waiter that records its wake-ups, as the server's timer would.
struct Waiting {
  AdmissionWaiter waiter;
  int woken = 0;
  explicit Waiting(std::size_t amount) {
    waiter.amount = amount;
    waiter.wake = [this] { ++woken; };
  }
  Waiting(std::string source, bool known) {
    waiter.source = std::move(source);
    waiter.known = known;
    waiter.wake = [this] { ++woken; };
  }
};

TEST(AdmissionBudget, GrantsWhatFitsAndQueuesTheRestInArrivalOrder) {
  AdmissionBudget budget(100);
  EXPECT_TRUE(budget.tryAcquire(60));
  EXPECT_FALSE(budget.tryAcquire(50));
  Waiting first(50), second(10);
  budget.enqueue(first.waiter);
  budget.enqueue(second.waiter);
  // 10 would fit, but the waiter ahead of it comes first: no one passes the queue.
  EXPECT_FALSE(budget.tryAcquire(10));
  budget.release(60);
  EXPECT_TRUE(first.waiter.granted);
  EXPECT_TRUE(second.waiter.granted);
  EXPECT_EQ(first.woken, 1);
  EXPECT_EQ(budget.used(), 60u);
}

TEST(AdmissionBudget, AFrameLargerThanTheWholeBudgetGoesWhenNothingElseHoldsAny) {
  AdmissionBudget budget(100);
  EXPECT_TRUE(budget.tryAcquire(1000));
  EXPECT_EQ(budget.used(), 1000u);
  EXPECT_FALSE(budget.tryAcquire(1));
  budget.release(1000);
  EXPECT_TRUE(budget.tryAcquire(1));
}

// A budget of 10 that one frame holds whole: whoever asks now waits.
struct AdmissionBudgetHeldWhole : ::testing::Test {
  AdmissionBudget budget{10};
  void SetUp() override { ASSERT_TRUE(budget.tryAcquire(10)); }
};

TEST_F(AdmissionBudgetHeldWhole, AWaiterThatGaveUpIsNeverGranted) {
  Waiting late(5);
  budget.enqueue(late.waiter);
  budget.forget(late.waiter);  // its deadline passed
  budget.release(10);
  EXPECT_FALSE(late.waiter.granted);
  EXPECT_EQ(late.woken, 0);
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(AdmissionBudgetHeldWhole, CloseWakesEveryWaiterUngrantedAndRefusesLaterOnes) {
  Waiting a(5), b(5);
  budget.enqueue(a.waiter);
  budget.enqueue(b.waiter);
  budget.close();
  EXPECT_EQ(a.woken, 1);
  EXPECT_EQ(b.woken, 1);
  EXPECT_FALSE(a.waiter.granted);
  budget.forget(a.waiter);
  budget.forget(b.waiter);
  budget.release(10);
  EXPECT_FALSE(b.waiter.granted);
  EXPECT_FALSE(budget.tryAcquire(1));
}

TEST(BudgetHold, ReturnsWhatItHoldsWhicheverWayTheFrameEnds) {
  AdmissionBudget budget(100);
  {
    BudgetHold hold(budget);
    ASSERT_TRUE(budget.tryAcquire(40));
    hold.add(40);
    hold.give(15);  // a read that did not fill its step
    EXPECT_EQ(budget.used(), 25u);
    hold.give(100);  // never more than it holds
    EXPECT_EQ(budget.used(), 0u);
    ASSERT_TRUE(budget.tryAcquire(30));
    hold.add(30);
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(HandshakeGate, OneSourceGetsAtMostItsShare) {
  HandshakeGate gate(8, 2, 0);
  EXPECT_TRUE(gate.tryAcquire("10.0.0.1", false));
  EXPECT_TRUE(gate.tryAcquire("10.0.0.1", false));
  EXPECT_FALSE(gate.tryAcquire("10.0.0.1", false));
  EXPECT_TRUE(gate.tryAcquire("10.0.0.2", false));
  Waiting third("10.0.0.1", false);
  gate.enqueue(third.waiter);
  gate.release("10.0.0.2");  // another source's slot: still over its share
  EXPECT_FALSE(third.waiter.granted);
  gate.release("10.0.0.1");
  EXPECT_TRUE(third.waiter.granted);
  EXPECT_EQ(third.woken, 1);
  EXPECT_EQ(gate.used(), 2u);
}

TEST(HandshakeGate, ReservedSlotsAreForKnownSourcesAndTheyPassUnknownWaiters) {
  HandshakeGate gate(3, 3, 1);
  EXPECT_TRUE(gate.tryAcquire("flood", false));
  EXPECT_TRUE(gate.tryAcquire("flood", false));
  EXPECT_FALSE(gate.tryAcquire("flood", false));  // the last slot is reserved
  Waiting unknown("flood", false);
  gate.enqueue(unknown.waiter);
  // A known agent is not queued behind the unknown source waiting for unreserved slots.
  EXPECT_TRUE(gate.tryAcquire("agent", true));
  EXPECT_FALSE(gate.tryAcquire("agent2", true));  // full
  gate.release("agent");
  EXPECT_FALSE(unknown.waiter.granted);  // the freed slot is the reserved one
  gate.release("flood");
  EXPECT_TRUE(unknown.waiter.granted);
}

TEST(HandshakeGate, ReservingEverySlotStillLeavesOneForUnknownSources) {
  HandshakeGate gate(2, 2, 5);
  EXPECT_TRUE(gate.tryAcquire("new", false));
  EXPECT_FALSE(gate.tryAcquire("new", false));
}

TEST(HandshakeGate, CloseWakesWaitersAndRefusesLaterOnes) {
  HandshakeGate gate(1, 1, 0);
  ASSERT_TRUE(gate.tryAcquire("a", false));
  Waiting b("b", false);
  gate.enqueue(b.waiter);
  gate.close();
  EXPECT_EQ(b.woken, 1);
  EXPECT_FALSE(b.waiter.granted);
  gate.forget(b.waiter);
  gate.release("a");
  EXPECT_FALSE(gate.tryAcquire("c", true));
}

TEST(KnownSources, ASourceIsKnownForTenMinutesAfterItsHandshake) {
  KnownSources known;
  const auto t0 = Clock::time_point() + std::chrono::hours(1);
  EXPECT_FALSE(known.known("10.0.0.1", t0));
  known.remember("10.0.0.1", t0);
  EXPECT_TRUE(known.known("10.0.0.1", t0 + std::chrono::minutes(9)));
  EXPECT_FALSE(known.known("10.0.0.1", t0 + std::chrono::minutes(10)));
}

TEST(KnownSources, WhenFullTheExpiredGoFirstThenEveryone) {
  KnownSources known(2);
  const auto t0 = Clock::time_point() + std::chrono::hours(1);
  known.remember("old", t0);
  known.remember("recent", t0 + std::chrono::minutes(8));
  known.remember("new", t0 + std::chrono::minutes(11));  // "old" has expired: it goes
  EXPECT_EQ(known.size(), 2u);
  EXPECT_TRUE(known.known("recent", t0 + std::chrono::minutes(11)));
  known.remember("newer", t0 + std::chrono::minutes(12));  // none expired: all forgotten
  EXPECT_EQ(known.size(), 1u);
  EXPECT_FALSE(known.known("recent", t0 + std::chrono::minutes(12)));
}

TEST(UnauthenticatedSources, ASourceAtItsLimitIsRefusedUntilOneAuthenticates) {
  UnauthenticatedSources sources(2);
  EXPECT_EQ(sources.atLimit("a"), 0u);
  sources.opened("a");
  EXPECT_EQ(sources.atLimit("a"), 0u);
  sources.opened("a");
  EXPECT_EQ(sources.atLimit("a"), 2u);
  sources.authenticated("a");
  EXPECT_EQ(sources.atLimit("a"), 0u);
}

TEST(UnauthenticatedSources, TheHeaviestSourceLosesAConnectionFirst) {
  UnauthenticatedSources sources(10);
  EXPECT_EQ(sources.heaviest(), nullptr);
  sources.opened("agent");
  for (int i = 0; i < 3; ++i) sources.opened("flood");
  ASSERT_NE(sources.heaviest(), nullptr);
  EXPECT_EQ(*sources.heaviest(), "flood");
  for (int i = 0; i < 3; ++i) sources.authenticated("flood");
  EXPECT_EQ(*sources.heaviest(), "agent");
  sources.authenticated("agent");
  EXPECT_EQ(sources.heaviest(), nullptr);
}

}  // namespace
}  // namespace ibc::collector
