/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "flow-network.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <queue>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowNetwork");

NS_OBJECT_ENSURE_REGISTERED(FlowNetwork);

TypeId
FlowNetwork::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowNetwork")
                            .SetParent<Object>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<FlowNetwork>();
    return tid;
}

FlowNetwork::FlowNetwork() = default;

FlowNetwork::~FlowNetwork() = default;

void
FlowNetwork::DoDispose()
{
    m_recompute.Cancel();
    m_next.Cancel();
    m_flows.clear();
    m_active.clear();
    Object::DoDispose();
}

uint32_t
FlowNetwork::AddLink(double bytesPerSecond)
{
    NS_ABORT_MSG_UNLESS(bytesPerSecond > 0 && std::isfinite(bytesPerSecond),
                        "FlowNetwork::AddLink: capacity " << bytesPerSecond
                                                          << " B/s; give a positive rate");
    m_capacity.push_back(bytesPerSecond);
    m_carried.push_back(0);
    m_left.push_back(0);
    m_unfrozen.push_back(0);
    m_version.push_back(0);
    m_onLink.emplace_back();
    return m_capacity.size() - 1;
}

uint32_t
FlowNetwork::GetNLinks() const
{
    return m_capacity.size();
}

double
FlowNetwork::GetCapacity(uint32_t link) const
{
    return m_capacity.at(link);
}

double
FlowNetwork::GetBytesCarried(uint32_t link) const
{
    return m_carried.at(link);
}

uint64_t
FlowNetwork::GetFlowsStarted() const
{
    return m_started;
}

uint32_t
FlowNetwork::GetActiveFlows() const
{
    return m_active.size();
}

uint64_t
FlowNetwork::GetRecomputations() const
{
    return m_recomputations;
}

void
FlowNetwork::StartFlow(const std::vector<uint32_t>& links, double bytes, Callback<void> drained)
{
    ++m_started;
    if (links.empty() || bytes <= 0)
    {
        Simulator::ScheduleNow([drained]() {
            if (!drained.IsNull())
            {
                drained();
            }
        });
        return;
    }
    for (uint32_t l : links)
    {
        NS_ABORT_MSG_UNLESS(l < m_capacity.size(),
                            "FlowNetwork::StartFlow: no link " << l << " (there are "
                                                               << m_capacity.size() << ")");
    }
    Advance(); // the others' bytes up to now, at their old rates
    uint32_t slot;
    if (!m_free.empty())
    {
        slot = m_free.back();
        m_free.pop_back();
    }
    else
    {
        slot = m_flows.size();
        m_flows.emplace_back();
    }
    Flow& f = m_flows[slot];
    f.links = links;
    f.remaining = bytes;
    f.rate = 0;
    f.drained = drained;
    m_active.push_back(slot);
    Touch();
}

void
FlowNetwork::Advance()
{
    const Time now = Simulator::Now();
    const double dt = (now - m_last).GetSeconds();
    m_last = now;
    if (dt <= 0)
    {
        return;
    }
    for (uint32_t slot : m_active)
    {
        Flow& f = m_flows[slot];
        const double sent = std::min(f.remaining, f.rate * dt);
        f.remaining -= sent;
        for (uint32_t l : f.links)
        {
            m_carried[l] += sent;
        }
    }
}

void
FlowNetwork::Touch()
{
    if (!m_recompute.IsRunning())
    {
        m_recompute = Simulator::ScheduleNow(&FlowNetwork::Recompute, this);
    }
}

void
FlowNetwork::Recompute()
{
    ++m_recomputations;
    Advance();
    m_next.Cancel();
    if (m_active.empty())
    {
        return;
    }
    // Progressive filling: the link with the smallest fair share fixes its unfrozen flows
    // at that share; their capacity leaves every other link they cross.
    for (uint32_t slot : m_active)
    {
        for (uint32_t l : m_flows[slot].links)
        {
            if (m_onLink[l].empty())
            {
                m_touched.push_back(l);
                m_left[l] = m_capacity[l];
            }
            m_onLink[l].push_back(slot);
        }
        m_flows[slot].rate = -1; // not yet frozen
    }
    using Entry = std::pair<double, std::pair<uint32_t, uint32_t>>; // share, (link, version)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    for (uint32_t l : m_touched)
    {
        m_unfrozen[l] = m_onLink[l].size();
        ++m_version[l];
        heap.push({m_left[l] / m_unfrozen[l], {l, m_version[l]}});
    }
    while (!heap.empty())
    {
        const auto [share, key] = heap.top();
        heap.pop();
        const uint32_t l = key.first;
        if (key.second != m_version[l] || m_unfrozen[l] == 0)
        {
            continue; // stale
        }
        for (uint32_t slot : m_onLink[l])
        {
            Flow& f = m_flows[slot];
            if (f.rate >= 0)
            {
                continue;
            }
            f.rate = share;
            for (uint32_t k : f.links)
            {
                m_left[k] = std::max(0.0, m_left[k] - share);
                --m_unfrozen[k];
                ++m_version[k];
                if (k != l && m_unfrozen[k] > 0)
                {
                    heap.push({m_left[k] / m_unfrozen[k], {k, m_version[k]}});
                }
            }
        }
    }
    for (uint32_t l : m_touched)
    {
        m_onLink[l].clear();
    }
    m_touched.clear();
    // The next end: the flow with the least time left (rounded up to the next nanosecond).
    double soonest = HUGE_VAL;
    for (uint32_t slot : m_active)
    {
        const Flow& f = m_flows[slot];
        soonest = std::min(soonest, f.remaining / f.rate);
    }
    const auto ns = static_cast<int64_t>(std::ceil(soonest * 1e9 - 1e-6));
    m_next =
        Simulator::Schedule(NanoSeconds(std::max<int64_t>(0, ns)), &FlowNetwork::NextEnd, this);
}

void
FlowNetwork::NextEnd()
{
    Advance();
    // Every flow that has at most a nanosecond's worth left ends now (the event time was
    // rounded up to a whole nanosecond).
    std::vector<Callback<void>> done;
    for (std::size_t i = 0; i < m_active.size();)
    {
        const uint32_t slot = m_active[i];
        Flow& f = m_flows[slot];
        if (f.remaining <= f.rate * 1e-9 + 1e-9)
        {
            for (uint32_t l : f.links)
            {
                m_carried[l] += f.remaining;
            }
            done.push_back(f.drained);
            f.drained = Callback<void>();
            f.links.clear();
            // swap-remove from the active list
            m_active[i] = m_active.back();
            m_active.pop_back();
            m_free.push_back(slot);
            continue;
        }
        ++i;
    }
    Touch();
    for (const Callback<void>& cb : done)
    {
        if (!cb.IsNull())
        {
            cb();
        }
    }
}

} // namespace ns3
