/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Google Benchmark micro-benchmarks of the hottest code paths of the infiniband module:
 * packet assembly (header serialization and CRCs), the CRC kernels themselves, the VL
 * rewrite a switch does, VL arbitration, and one packet's whole trip through a switch
 * (port transmit, credits, crossbar, port receive) inside the simulator, and the event
 * scheduler's "hold" operation (take the first event, schedule one later) with as many
 * events pending as a large fabric keeps.
 *
 *   build-release/ib-microbench                       (utils/benchmark.sh builds it)
 *   build-release/ib-microbench --benchmark_filter=Crc
 */

#include "ns3/core-module.h"
#include "ns3/infiniband-module.h"
#include "ns3/map-scheduler.h"
#include "ns3/network-module.h"

#include <benchmark/benchmark.h>
#include <random>
#include <vector>

using namespace ns3;

namespace
{

Ptr<Packet>
SealedPacket(uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    IbLrhHeader lrh;
    lrh.SetDlid(2);
    lrh.SetSlid(1);
    IbBthHeader bth;
    bth.SetOpcode(IbOpcode::RC_SEND_ONLY);
    IbPacket::Seal(p, lrh, nullptr, bth, payload);
    return p;
}

/// Build a sealed packet with a virtual payload: LRH + BTH serialization, pad, CRCs.
void
BM_SealVirtualPayload(benchmark::State& state)
{
    const uint32_t payload = state.range(0);
    for (auto _ : state)
    {
        benchmark::DoNotOptimize(SealedPacket(payload));
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_SealVirtualPayload)->Arg(64)->Arg(1024)->Arg(4096);

/// ICRC over real bytes (data mode): the table-driven Boost CRC over the whole packet.
void
BM_IcrcFullBytes(benchmark::State& state)
{
    std::vector<uint8_t> bytes(state.range(0));
    std::mt19937 rng(1);
    for (auto& b : bytes)
    {
        b = static_cast<uint8_t>(rng());
    }
    bytes[1] = 0x02; // LNH = local
    for (auto _ : state)
    {
        benchmark::DoNotOptimize(IbCrc::ComputeIcrc(bytes.data(), bytes.size()));
    }
    state.SetBytesProcessed(state.iterations() * bytes.size());
}

BENCHMARK(BM_IcrcFullBytes)->Arg(64)->Arg(1024)->Arg(4120);

/// ICRC of 20 header bytes followed by n virtual zero bytes: O(log n) table look-ups.
void
BM_IcrcZeroTail(benchmark::State& state)
{
    uint8_t hdr[20] = {0x00, 0x02, 0x00, 0x02, 0x04, 0x07, 0x00, 0x01, 0x04, 0x00,
                       0xff, 0xff, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01};
    const uint32_t zeros = state.range(0);
    for (auto _ : state)
    {
        benchmark::DoNotOptimize(IbCrc::ComputeIcrcZeroTail(hdr, sizeof(hdr), zeros));
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_IcrcZeroTail)->Arg(64)->Arg(1024)->Arg(4096)->Arg(4093);

/// The VCRC update when a switch rewrites the VL: one changed byte, O(log n).
void
BM_VcrcUpdateFirstByte(benchmark::State& state)
{
    uint16_t v = 0x1234;
    for (auto _ : state)
    {
        v = IbCrc::UpdateVcrcForFirstByte(v, 0x00, 0x10, 4120);
        benchmark::DoNotOptimize(v);
    }
}

BENCHMARK(BM_VcrcUpdateFirstByte);

/// A switch's VL rewrite of a whole packet: LRH out and in, trailer out and in.
void
BM_SetVl(benchmark::State& state)
{
    Ptr<Packet> p = SealedPacket(4096);
    uint8_t vl = 0;
    for (auto _ : state)
    {
        vl ^= 1;
        IbPacket::SetVl(p, vl);
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_SetVl);

/// VL arbitration among 8 eligible VLs with OpenSM's default tables.
void
BM_VlArbiterSelect(benchmark::State& state)
{
    IbVlArbiter arb;
    std::vector<IbVlArbiter::Entry> high{{0, 4}};
    std::vector<IbVlArbiter::Entry> low;
    for (uint8_t vl = 1; vl < 15; ++vl)
    {
        low.push_back({vl, 4});
    }
    arb.SetHighTable(high);
    arb.SetLowTable(low);
    uint16_t heads[16];
    for (auto& h : heads)
    {
        h = 65;
    }
    for (auto _ : state)
    {
        benchmark::DoNotOptimize(arb.Select(0x00FF, heads));
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_VlArbiterSelect);

/// One 4 KB packet from a host through a cut-through switch to another host, inside the
/// simulator: transmit, flow control, crossbar, forwarding, receive. Per packet.
void
BM_SwitchHop(benchmark::State& state)
{
    const uint32_t batch = 1000;
    for (auto _ : state)
    {
        state.PauseTiming();
        IbHelper::ResetLidAllocation();
        IbHelper ib;
        ib.SetDeviceAttribute("NumDataVls", UintegerValue(1));
        Ptr<Node> h0 = CreateObject<Node>();
        Ptr<Node> h1 = CreateObject<Node>();
        Ptr<Node> s = CreateObject<Node>();
        Ptr<IbSwitch> sw = CreateObject<IbSwitch>();
        s->AggregateObject(sw);
        Ptr<IbNetDevice> a = ib.InstallPort(h0);
        Ptr<IbNetDevice> b = ib.InstallPort(h1);
        sw->AddPort(ib.InstallPort(s));
        sw->AddPort(ib.InstallPort(s));
        ib.Connect(a, sw->GetPort(1));
        ib.Connect(sw->GetPort(2), b);
        sw->SetLftEntry(b->GetLid(), 2);
        IbRawTrafficHelper traffic(b->GetLid());
        traffic.SetAttribute("MaxPackets", UintegerValue(batch));
        traffic.Install(a).Start(NanoSeconds(100));
        state.ResumeTiming();
        Simulator::Run();
        state.PauseTiming();
        Simulator::Destroy();
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * batch);
}

BENCHMARK(BM_SwitchHop)->Unit(benchmark::kMillisecond);

/// The classic "hold" model of a scheduler: take the first of N pending events and insert
/// one a random delay after it: @p MaxDelay time steps at most (2,000,000: 2 ms at ns-3's
/// default nanosecond resolution; 512: what a fabric does, its events are due a few
/// hundred nanoseconds after the one that schedules them). N = 1,000 is a small fabric;
/// 20,000 is about what a 1024-host fat tree keeps pending (a transmit completion per
/// busy port, an arrival per cable direction, flow-control refreshes, applications).
template <class S, uint64_t MaxDelay>
void
BM_SchedulerHold(benchmark::State& state)
{
    Ptr<Scheduler> s = CreateObject<S>();
    std::mt19937_64 rng(1);
    uint32_t uid = 0;
    // Schedulers carry the pointer and never call through it, but IbTimingWheelScheduler
    // prefetches the next event's object: a real address, as in a simulation (a null one
    // costs a failed page walk per event).
    alignas(64) static char target[64];
    auto make = [&rng, &uid](uint64_t now) {
        Scheduler::Event ev;
        ev.impl = reinterpret_cast<EventImpl*>(target);
        ev.key.m_ts = now + rng() % MaxDelay;
        ev.key.m_uid = uid++;
        ev.key.m_context = 0;
        return ev;
    };
    for (int64_t i = 0; i < state.range(0); ++i)
    {
        s->Insert(make(0));
    }
    for (auto _ : state)
    {
        const Scheduler::Event first = s->RemoveNext();
        s->Insert(make(first.key.m_ts));
    }
    state.SetItemsProcessed(state.iterations());
}

BENCHMARK_TEMPLATE(BM_SchedulerHold, IbHeapScheduler, 2000000)->Arg(1000)->Arg(20000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_SchedulerHold, IbTimingWheelScheduler, 2000000)
    ->Arg(1000)
    ->Arg(20000)
    ->Arg(100000);
BENCHMARK_TEMPLATE(BM_SchedulerHold, MapScheduler, 2000000)->Arg(1000)->Arg(20000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_SchedulerHold, IbHeapScheduler, 512)->Arg(1000)->Arg(20000)->Arg(100000);
BENCHMARK_TEMPLATE(BM_SchedulerHold, IbTimingWheelScheduler, 512)
    ->Arg(1000)
    ->Arg(20000)
    ->Arg(100000);
BENCHMARK_TEMPLATE(BM_SchedulerHold, MapScheduler, 512)->Arg(1000)->Arg(20000)->Arg(100000);

} // namespace

BENCHMARK_MAIN();
