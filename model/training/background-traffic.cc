/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "background-traffic.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/ib-range-checker.h"
#include "ns3/log.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("BackgroundTraffic");

NS_OBJECT_ENSURE_REGISTERED(BackgroundTraffic);

TypeId
BackgroundTraffic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::BackgroundTraffic")
            .SetParent<Object>()
            .SetGroupName("Infiniband")
            .AddConstructor<BackgroundTraffic>()
            .AddAttribute("MessageBytes",
                          "Bytes of each message of a flow.",
                          UintegerValue(1 << 20),
                          MakeUintegerAccessor(&BackgroundTraffic::m_bytes),
                          MakeIbUintegerChecker<uint64_t>("BackgroundTraffic",
                                                          "MessageBytes",
                                                          1,
                                                          uint64_t(1) << 40))
            .AddAttribute("Load",
                          "Offered load of each flow, as a share of LineRate.",
                          DoubleValue(0.3),
                          MakeDoubleAccessor(&BackgroundTraffic::m_load),
                          MakeIbDoubleChecker("BackgroundTraffic", "Load", 1e-6, 1.0))
            .AddAttribute("LineRate",
                          "The rate Load is a share of (the hosts' link data rate).",
                          DataRateValue(DataRate("400Gbps")),
                          MakeDataRateAccessor(&BackgroundTraffic::m_rate),
                          MakeDataRateChecker())
            .AddAttribute(
                "MaxOutstanding",
                "Messages of a flow in flight at most; one more is skipped.",
                UintegerValue(4),
                MakeUintegerAccessor(&BackgroundTraffic::m_maxOut),
                MakeIbUintegerChecker<uint32_t>("BackgroundTraffic", "MaxOutstanding", 1, 1000000));
    return tid;
}

BackgroundTraffic::BackgroundTraffic()
    : m_bytes(1 << 20),
      m_load(0.3),
      m_rate("400Gbps"),
      m_maxOut(4)
{
}

BackgroundTraffic::~BackgroundTraffic() = default;

void
BackgroundTraffic::DoDispose()
{
    for (Flow& f : m_flow)
    {
        f.next.Cancel();
    }
    m_flow.clear();
    Object::DoDispose();
}

void
BackgroundTraffic::AddFlow(Ptr<CollectiveCommunicator> pair)
{
    NS_ABORT_MSG_UNLESS(pair && pair->GetNRanks() == 2,
                        "BackgroundTraffic: a flow is a communicator of two ranks");
    Flow f;
    f.comm = pair;
    m_flow.push_back(f);
}

void
BackgroundTraffic::Start()
{
    NS_ABORT_MSG_IF(m_rate.GetBitRate() == 0, "BackgroundTraffic: LineRate is 0");
    m_running = true;
    const double interval = Interval().GetSeconds();
    Ptr<UniformRandomVariable> u = CreateObject<UniformRandomVariable>();
    for (uint32_t f = 0; f < m_flow.size(); ++f)
    {
        m_flow[f].next = Simulator::Schedule(Seconds(u->GetValue(0, interval)),
                                             &BackgroundTraffic::Send,
                                             this,
                                             f);
    }
}

void
BackgroundTraffic::Stop()
{
    m_running = false;
    for (Flow& f : m_flow)
    {
        f.next.Cancel();
    }
}

void
BackgroundTraffic::Send(uint32_t f)
{
    if (!m_running)
    {
        return;
    }
    Flow& flow = m_flow[f];
    if (flow.outstanding < m_maxOut)
    {
        ++flow.outstanding;
        CollectiveOpSpec spec;
        spec.kind = CollectiveKind::BROADCAST;
        spec.type = CollectiveDataType::INT8;
        spec.count = m_bytes;
        spec.root = 0;
        flow.comm->Start(spec,
                         nullptr,
                         CollectiveCommunicator::DoneCallback([this, f](uint32_t, Time) {
                             --m_flow[f].outstanding;
                             m_delivered += m_bytes;
                             m_last = Simulator::Now();
                         }));
    }
    else
    {
        ++m_skipped;
    }
    flow.next = Simulator::Schedule(Interval(), &BackgroundTraffic::Send, this, f);
}

Time
BackgroundTraffic::Interval() const
{
    return Seconds(m_bytes * 8.0 / (m_load * m_rate.GetBitRate()));
}

uint64_t
BackgroundTraffic::GetBytesDelivered() const
{
    return m_delivered;
}

Time
BackgroundTraffic::GetLastDelivery() const
{
    return m_last;
}

uint64_t
BackgroundTraffic::GetSkipped() const
{
    return m_skipped;
}

uint32_t
BackgroundTraffic::GetNFlows() const
{
    return m_flow.size();
}

} // namespace ns3
