/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * IbHeapScheduler and IbTimingWheelScheduler: the same event order as ns-3's MapScheduler,
 * operation by operation and for a whole fabric simulation.
 */

#include "ns3/core-module.h"
#include "ns3/event-impl.h"
#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-heap-scheduler.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-prefetch.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/ib-switch.h"
#include "ns3/ib-timing-wheel-scheduler.h"
#include "ns3/ib-topology-builder.h"
#include "ns3/ib-traffic-pattern.h"
#include "ns3/map-scheduler.h"
#include "ns3/network-module.h"

#include <gtest/gtest.h>
#include <random>
#include <vector>

using namespace ns3;

namespace
{

/**
 * Drive a scheduler of type @p type and ns-3's MapScheduler through the same random
 * inserts, removals of the first event and removals of any event, checking that both
 * give the same events in the same order. Times: mostly a few steps ahead (many ties),
 * some beyond the timing wheel's span, a few very far; phases that fill and phases that
 * drain, so that the wheel empties and moves on to the heap's first event. Half the
 * inserts come with a prefetch hint (IbPrefetch::Hint), half of those
 * with a second (IbPrefetch::Also).
 */
void
CheckOrderAgainstMapScheduler(const std::string& type)
{
    ObjectFactory factory;
    factory.SetTypeId(type);
    Ptr<Scheduler> heap = factory.Create<Scheduler>();
    Ptr<Scheduler> map = CreateObject<MapScheduler>();
    std::mt19937_64 rng(12345);
    std::vector<Scheduler::Event> pending; // events in both, to pick removals from
    uint32_t uid = 0;
    uint64_t now = 0;
    uint64_t removed = 0;
    uint64_t compared = 0;
    uint64_t farCompared = 0; // removed first events inserted a wheel span or more ahead
    constexpr uint64_t span = IbTimingWheelScheduler::SPAN;
    for (int step = 0; step < 300000; ++step)
    {
        const unsigned r = rng() % 100;
        const unsigned inserts = (step / 20000) % 2 == 0 ? 55 : 35; // fill, then drain
        if (r < inserts || pending.empty())
        {
            Scheduler::Event ev;
            // A distinct value per event, to see it come back: schedulers only carry the
            // pointer, they never call through it.
            ev.impl = reinterpret_cast<EventImpl*>(static_cast<uintptr_t>(uid + 1) * 64);
            // Few distinct times: many ties, broken by uid as in every ns-3 scheduler.
            const unsigned kind = rng() % 100;
            ev.key.m_ts = now + (kind < 90   ? rng() % 64
                                 : kind < 98 ? span - 8 + rng() % (2 * span)
                                             : rng() % 1000000000);
            ev.key.m_uid = uid++;
            ev.key.m_context = static_cast<uint32_t>(rng() % 7);
            if (rng() % 2 == 0)
            {
                // Hints cannot change the order, whatever they name: this only shows
                // that random addresses (most mapped to nothing; some above 2^48, which
                // no hint can name; extra lines before, near and far beyond the first)
                // of up to 63 lines, for events near and far, are harmless.
                const auto number = [&rng]() {
                    return static_cast<uintptr_t>(rng() % 8 == 0 ? rng() : rng() % (1ull << 46));
                };
                const uintptr_t first = number();
                const uintptr_t also = rng() % 3 == 0   ? 0
                                       : rng() % 2 == 0 ? first + rng() % 4096
                                                        : number();
                IbPrefetch::Hint(reinterpret_cast<const void*>(first),
                                 static_cast<uint32_t>(rng() % 64),
                                 reinterpret_cast<const void*>(also));
                if (rng() % 2 == 0)
                {
                    IbPrefetch::Also(reinterpret_cast<const void*>(number()),
                                     static_cast<uint32_t>(rng() % 64),
                                     reinterpret_cast<const void*>(number()));
                }
            }
            heap->Insert(ev);
            map->Insert(ev);
            pending.push_back(ev);
        }
        else if (r < 95)
        {
            ASSERT_FALSE(heap->IsEmpty());
            const Scheduler::Event a = heap->PeekNext();
            const Scheduler::Event b = map->PeekNext();
            ASSERT_EQ(a.key.m_uid, b.key.m_uid) << "step " << step;
            const Scheduler::Event x = heap->RemoveNext();
            const Scheduler::Event y = map->RemoveNext();
            ASSERT_EQ(x.key.m_ts, y.key.m_ts);
            ASSERT_EQ(x.key.m_uid, y.key.m_uid) << "step " << step;
            ASSERT_EQ(x.key.m_context, y.key.m_context);
            ASSERT_EQ(x.impl, y.impl);
            farCompared += x.key.m_ts - now >= span;
            now = x.key.m_ts;
            ++compared;
            for (auto& p : pending)
            {
                if (p.key.m_uid == x.key.m_uid)
                {
                    p = pending.back();
                    pending.pop_back();
                    break;
                }
            }
        }
        else
        {
            const std::size_t i = rng() % pending.size();
            heap->Remove(pending[i]);
            map->Remove(pending[i]);
            pending[i] = pending.back();
            pending.pop_back();
            ++removed;
        }
    }
    while (!map->IsEmpty())
    {
        ASSERT_EQ(heap->RemoveNext().key.m_uid, map->RemoveNext().key.m_uid);
        ++compared;
    }
    EXPECT_TRUE(heap->IsEmpty());
    IbPrefetch::Hint(nullptr, 0); // none left for the next test
    EXPECT_GT(removed, 5000u);
    EXPECT_GT(compared, 50000u);
    EXPECT_GT(farCompared, 100u); // the wheel emptied and moved on to the heap's first
}

} // namespace

TEST(IbHeapScheduler, GivesMapSchedulersOrderThroughInsertsRemovesAndTies)
{
    CheckOrderAgainstMapScheduler("ns3::IbHeapScheduler");
}

TEST(IbTimingWheelScheduler, GivesMapSchedulersOrderThroughInsertsRemovesAndTies)
{
    CheckOrderAgainstMapScheduler("ns3::IbTimingWheelScheduler");
}

TEST(IbTimingWheelScheduler, StopsWhenNs3sEventUidWraps)
{
    // After 2^32 events ns-3's uid starts again at 0: ordering and cancelling by uid go
    // wrong from there, so the scheduler stops with a message (before: silently on).
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            Ptr<Scheduler> wheel = CreateObject<IbTimingWheelScheduler>();
            Scheduler::Event ev;
            ev.impl = reinterpret_cast<EventImpl*>(uintptr_t{64});
            ev.key.m_ts = 10;
            ev.key.m_context = 0;
            ev.key.m_uid = 0xFFFFFFF0u;
            wheel->Insert(ev);
            ev.key.m_ts = 12;
            ev.key.m_uid = 4;
            wheel->Insert(ev);
        },
        "ns-3's 32-bit event uid wrapped .* after 2\\^32 events");
}

TEST(IbTimingWheelScheduler, StopsOnAnEventBeforeTheOneThatRan)
{
    // Checked with asserts only before: in a release build the event went to the far heap
    // and waited until the wheel emptied, where MapScheduler runs it next.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            Ptr<Scheduler> wheel = CreateObject<IbTimingWheelScheduler>();
            Scheduler::Event ev;
            ev.impl = reinterpret_cast<EventImpl*>(uintptr_t{64});
            ev.key.m_ts = 1000;
            ev.key.m_context = 0;
            ev.key.m_uid = 1;
            wheel->Insert(ev);
            wheel->RemoveNext();
            ev.key.m_ts = 999;
            ev.key.m_uid = 2;
            wheel->Insert(ev);
        },
        "IbTimingWheelScheduler: an event at .*, before the event that ran at");
}

TEST(IbTimingWheelScheduler, PrefetchHintsKeepTheirLines)
{
    // What RemoveNext prefetches is decoded from the 64-bit hint stored with the event:
    // the first line, the count and one extra line up to 65,535 lines further on.
    const uintptr_t a = 0x7f12345640; // a line
    const auto at = [](uintptr_t x) { return reinterpret_cast<const void*>(x); };
    uint64_t h = IbPrefetch::Encode(at(a + 10), 3, nullptr);
    EXPECT_EQ(IbPrefetch::FirstLine(h), a);
    EXPECT_EQ(IbPrefetch::LineCount(h), 3u);
    EXPECT_EQ(IbPrefetch::ExtraLine(h), 0u);
    // A port's per-VL line, 512 bytes or more in.
    h = IbPrefetch::Encode(at(a + 10), 2, at(a + 512 + 5));
    EXPECT_EQ(IbPrefetch::FirstLine(h), a);
    EXPECT_EQ(IbPrefetch::LineCount(h), 2u);
    EXPECT_EQ(IbPrefetch::ExtraLine(h), a + 512);
    EXPECT_EQ(IbPrefetch::ExtraLine(IbPrefetch::Encode(at(a), 63, at(a + 64 * 0xFFFF + 63))),
              a + 64 * 0xFFFF);
    EXPECT_EQ(IbPrefetch::LineCount(IbPrefetch::Encode(at(a), 63, at(a + 64 * 0xFFFF))), 63u);
    // None: in the first line, 4 MB or more beyond it, before it.
    EXPECT_EQ(IbPrefetch::ExtraLine(IbPrefetch::Encode(at(a), 1, at(a + 20))), 0u);
    EXPECT_EQ(IbPrefetch::ExtraLine(IbPrefetch::Encode(at(a), 1, at(a + 64 * 0x10000))), 0u);
    EXPECT_EQ(IbPrefetch::ExtraLine(IbPrefetch::Encode(at(a + 64), 1, at(a))), 0u);
    EXPECT_EQ(IbPrefetch::Encode(at(a), 1, at(a)), IbPrefetch::Encode(at(a), 1, nullptr));
    // Bits above 47 of the address are dropped, not spread into the count or the extra line.
    h = IbPrefetch::Encode(at((uintptr_t{1} << 50) | a), 4, nullptr);
    EXPECT_EQ(IbPrefetch::FirstLine(h), a);
    EXPECT_EQ(IbPrefetch::LineCount(h), 4u);
    EXPECT_EQ(IbPrefetch::ExtraLine(h), 0u);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(IbPrefetch::Also(at(a), 64), "IbPrefetch::Hint/Also: 64 lines; at most 63");
}

TEST(IbTimingWheelScheduler, GivesMapSchedulersOrderAtTheWheelsEdges)
{
    Ptr<Scheduler> wheel = CreateObject<IbTimingWheelScheduler>();
    Ptr<Scheduler> map = CreateObject<MapScheduler>();
    constexpr uint64_t span = IbTimingWheelScheduler::SPAN;
    uint32_t uid = 0;
    auto insert = [&](uint64_t ts) {
        Scheduler::Event ev;
        ev.impl = reinterpret_cast<EventImpl*>(static_cast<uintptr_t>(uid + 1) * 64);
        ev.key.m_ts = ts;
        ev.key.m_uid = uid++;
        ev.key.m_context = uid % 3;
        wheel->Insert(ev);
        map->Insert(ev);
        return ev;
    };
    auto next = [&]() {
        const Scheduler::Event a = wheel->PeekNext();
        const Scheduler::Event x = wheel->RemoveNext();
        const Scheduler::Event y = map->RemoveNext();
        EXPECT_EQ(a.key.m_uid, x.key.m_uid);
        EXPECT_EQ(x.key.m_ts, y.key.m_ts);
        EXPECT_EQ(x.key.m_uid, y.key.m_uid);
        EXPECT_EQ(x.key.m_context, y.key.m_context);
        EXPECT_EQ(x.impl, y.impl);
        return x.key.m_ts;
    };
    // The wheel at step 63, the last bucket of a bitmap word; the next event one step
    // short of the span lands in bucket 62 of the same word (the search wraps), the one
    // after it a whole span ahead (through the heap).
    insert(63);
    insert(63 + span - 1);
    insert(63 + span);
    insert(63 + span);
    EXPECT_EQ(next(), 63u);
    EXPECT_EQ(next(), 63 + span - 1);
    EXPECT_EQ(next(), 63 + span);
    // More events on one step than the chunk pool first holds (256 chunks of 7), ties
    // through the heap and directly, and removals from a bucket of many chunks whose
    // first chunk is partly taken.
    const uint64_t base = 63 + span;
    const Scheduler::Event farTie = insert(base + span + 5);
    std::vector<Scheduler::Event> burst;
    constexpr uint32_t kBurst = 4000; // 256 x 7 = 1,792 slots, and again as many
    for (uint32_t i = 0; i < kBurst; ++i)
    {
        burst.push_back(insert(base + 100));
    }
    insert(base + span + 5);
    EXPECT_EQ(next(), base); // the second event at base: a tie across the heap
    EXPECT_EQ(next(), base + 100);
    EXPECT_EQ(next(), base + 100);
    EXPECT_EQ(next(), base + 100);
    for (const Scheduler::Event& gone : {burst[3], burst[kBurst / 2], burst[kBurst - 1]})
    {
        wheel->Remove(gone);
        map->Remove(gone);
    }
    wheel->Remove(farTie);
    map->Remove(farTie);
    insert(base + 100 + span); // through the heap, into the wheel once the burst is gone
    uint64_t drained = 0;
    while (!map->IsEmpty())
    {
        ASSERT_FALSE(wheel->IsEmpty());
        next();
        ++drained;
    }
    EXPECT_TRUE(wheel->IsEmpty());
    EXPECT_EQ(drained, kBurst - 3 - 3 + 1 + 1);
}

namespace
{

/// The timing wheel and MapScheduler driven together, their next events compared after
/// every change (PeekNext reads the wheel's cached first time in every build).
class WheelAndMap
{
  public:
    WheelAndMap()
        : m_wheel(CreateObject<IbTimingWheelScheduler>()),
          m_map(CreateObject<MapScheduler>())
    {
    }

    /**
     * @param ts the event's time step
     * @return the event inserted in both
     */
    Scheduler::Event Insert(uint64_t ts)
    {
        Scheduler::Event ev;
        ev.impl = reinterpret_cast<EventImpl*>(static_cast<uintptr_t>(m_uid + 1) * 64);
        ev.key.m_ts = ts;
        ev.key.m_uid = m_uid++;
        ev.key.m_context = 0;
        m_wheel->Insert(ev);
        m_map->Insert(ev);
        Check();
        return ev;
    }

    /// @return the time of the event both remove next
    uint64_t Next()
    {
        const Scheduler::Event x = m_wheel->RemoveNext();
        const Scheduler::Event y = m_map->RemoveNext();
        EXPECT_EQ(x.key.m_ts, y.key.m_ts);
        EXPECT_EQ(x.key.m_uid, y.key.m_uid);
        Check();
        return x.key.m_ts;
    }

    /// @param ev an event to remove from both
    void Remove(const Scheduler::Event& ev)
    {
        m_wheel->Remove(ev);
        m_map->Remove(ev);
        Check();
    }

    /// @return whether both are empty
    bool IsEmpty() const
    {
        return m_map->IsEmpty();
    }

  private:
    /// Both empty or both with the same next event.
    void Check()
    {
        ASSERT_EQ(m_wheel->IsEmpty(), m_map->IsEmpty());
        if (!m_map->IsEmpty())
        {
            EXPECT_EQ(m_wheel->PeekNext().key.m_uid, m_map->PeekNext().key.m_uid);
        }
    }

    Ptr<Scheduler> m_wheel; //!< the scheduler under test
    Ptr<Scheduler> m_map;   //!< the reference
    uint32_t m_uid{0};      //!< the next uid
};

} // namespace

TEST(IbTimingWheelScheduler, RemoveThatEmptiesTheWheelForgetsItsFirstTime)
{
    constexpr uint64_t span = IbTimingWheelScheduler::SPAN;
    WheelAndMap s;
    const Scheduler::Event near = s.Insert(10);
    s.Insert(10 + 3 * span); // in the heap
    s.Remove(near);          // the wheel is empty, the heap is not
    s.Insert(20);            // later than the removed event: a first time kept at 10 shows
    s.Insert(7);
    EXPECT_EQ(s.Next(), 7u);
    EXPECT_EQ(s.Next(), 20u);
    EXPECT_EQ(s.Next(), 10 + 3 * span); // the wheel empty: the heap's first, the wheel jumps
    s.Insert(10 + 3 * span + 1);
    s.Insert(10 + 3 * span); // a tie with the event just run, a later uid
    EXPECT_EQ(s.Next(), 10 + 3 * span);
    EXPECT_EQ(s.Next(), 10 + 3 * span + 1);
    EXPECT_TRUE(s.IsEmpty());
}

namespace
{

/// What a fabric run produced, per port.
struct FabricRun
{
    std::vector<uint64_t> txPackets; ///< per port, hosts then switches
    Time end;                        ///< simulated time of the last event
    uint64_t events{0};              ///< events executed
    uint64_t deliveries{0};          ///< hash of (time, host, packet uid) of every delivery
    uint64_t firstUid{0};            ///< packet uids count on across runs: hash them from this one
};

/// Fold a delivery into a run's hash: two runs that deliver the same packets (uids are
/// given in creation order) at the same times to the same hosts have the same hash.
void
HashDelivery(FabricRun* run, uint32_t host, Ptr<const Packet> p)
{
    const uint64_t parts[3] = {static_cast<uint64_t>(Simulator::Now().GetTimeStep()),
                               host,
                               p->GetUid() - run->firstUid};
    for (uint64_t v : parts)
    {
        run->deliveries = (run->deliveries ^ v) * 0x100000001b3ull;
    }
}

FabricRun
RunFatTree(const std::string& scheduler)
{
    ObjectFactory f;
    f.SetTypeId(scheduler);
    Simulator::SetScheduler(f);
    IbHelper::ResetLidAllocation();
    const IbTopology t = IbTopologyBuilder::FatTree3Level(8, 64, 1.0, IbLinkRate::HDR, 4);
    IbFabricHelper fh;
    fh.SetSubnetManagerAttribute("RoutingEngine", StringValue("ftree"));
    IbFabric fabric = fh.Build(t);
    ObjectFactory attrs;
    attrs.SetTypeId("ns3::IbRawTrafficApplication");
    attrs.Set("PayloadSize", UintegerValue(2048));
    attrs.Set("MaxPackets", UintegerValue(300));
    IbTrafficPattern::InstallRawFlows(fabric, IbTrafficPattern::Shift(64, 5), attrs)
        .Start(NanoSeconds(100));
    FabricRun r;
    r.deliveries = 0xcbf29ce484222325ull;
    r.firstUid = Create<Packet>()->GetUid();
    for (uint32_t i = 0; i < fabric.hostPorts.GetN(); ++i)
    {
        fabric.HostPort(i)->TraceConnectWithoutContext("MacRx",
                                                       MakeBoundCallback(&HashDelivery, &r, i));
    }
    Simulator::Run();
    r.end = Simulator::Now();
    r.events = Simulator::GetEventCount();
    for (uint32_t i = 0; i < fabric.hostPorts.GetN(); ++i)
    {
        r.txPackets.push_back(fabric.HostPort(i)->GetTxPackets());
    }
    const NetDeviceContainer sp = fabric.SwitchPorts();
    for (uint32_t i = 0; i < sp.GetN(); ++i)
    {
        Ptr<IbNetDevice> d = DynamicCast<IbNetDevice>(sp.Get(i));
        r.txPackets.push_back(d->GetTxPackets());
        r.txPackets.push_back(d->GetFlowControlPacketsSent());
    }
    Simulator::Destroy();
    Names::Clear();
    return r;
}

} // namespace

TEST(IbHeapScheduler, AFabricRunIsIdenticalToOneOnMapScheduler)
{
    const FabricRun map = RunFatTree("ns3::MapScheduler");
    const FabricRun heap = RunFatTree("ns3::IbHeapScheduler");
    const FabricRun wheel = RunFatTree("ns3::IbTimingWheelScheduler");
    ObjectFactory f;
    f.SetTypeId("ns3::MapScheduler");
    Simulator::SetScheduler(f); // back to ns-3's default for the tests that follow
    uint64_t total = 0;
    for (uint64_t n : map.txPackets)
    {
        total += n;
    }
    ASSERT_GT(total, 64u * 300);
    EXPECT_EQ(heap.txPackets, map.txPackets);
    EXPECT_EQ(heap.end, map.end);
    EXPECT_EQ(wheel.txPackets, map.txPackets);
    EXPECT_EQ(wheel.end, map.end);
    EXPECT_GT(map.events, 0u);
    EXPECT_EQ(heap.events, map.events);
    EXPECT_EQ(wheel.events, map.events);
    EXPECT_EQ(heap.deliveries, map.deliveries);
    EXPECT_EQ(wheel.deliveries, map.deliveries);
}
