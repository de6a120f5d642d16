/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-perftest-helper.h"

#include "ib-hca-helper.h"

#include "ns3/abort.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-perftest-application.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/string.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPerftestHelper");

namespace
{

/// Alignment of the landing half of a buffer (and smallest half).
constexpr uint64_t kBufferAlign = 4096;

/**
 * Create one side's resources on its HCA.
 * @param node the host
 * @param app its application (configured)
 * @param largest the largest message it runs
 * @param [out] qp the queue pair
 * @param [out] mr the buffer
 */
void
CreateSide(Ptr<Node> node,
           Ptr<IbPerftestApplication> app,
           uint64_t largest,
           Ptr<IbQueuePair>& qp,
           Ptr<IbMemoryRegion>& mr)
{
    Ptr<IbHca> hca = node->GetObject<IbHca>();
    NS_ABORT_MSG_UNLESS(hca,
                        "IbPerftestHelper::Install: node "
                            << node->GetId()
                            << " has no IbHca; install one first with IbHcaHelper::Install");
    // As perftest: the send queue holds TxDepth WRs, the receive queue RxDepth.
    const uint32_t sendWr = std::max<uint32_t>(app->GetTxDepth(), 1);
    const uint32_t recvWr = std::max<uint32_t>(app->GetRxDepth(), 1);
    Ptr<IbCompletionQueue> scq = hca->CreateCq(sendWr + 16);
    Ptr<IbCompletionQueue> rcq = hca->CreateCq(recvWr + 16);
    qp = hca->CreateQp(IbQpType::RC, scq, rcq, sendWr, recvWr);
    // One buffer: the first half is sent from, the second half receives the peer's data.
    const uint64_t half =
        (std::max<uint64_t>(largest, 8) + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
    mr = hca->RegisterMemory(2 * half,
                             IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
                                 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC);
}

/**
 * @param qp a queue pair
 * @param mr its buffer
 * @return what perftest sends to the peer about this side
 */
IbPerftestEndpoint
EndpointOf(Ptr<IbQueuePair> qp, Ptr<IbMemoryRegion> mr)
{
    IbPerftestEndpoint e;
    e.lid = qp->GetHca()->GetLid(qp->GetAttr().portNum);
    e.qpn = qp->GetQpNum();
    e.psn = qp->GetAttr().sqPsn;
    e.rkey = mr->GetRkey();
    e.addr = mr->GetAddr() + mr->GetLength() / 2;
    return e;
}

} // namespace

IbPerftestHelper::IbPerftestHelper()
{
    m_factory.SetTypeId("ns3::IbPerftestApplication");
}

void
IbPerftestHelper::SetAttribute(std::string name, const AttributeValue& value)
{
    m_factory.Set(name, value);
}

ApplicationContainer
IbPerftestHelper::Install(Ptr<Node> client, Ptr<Node> server, Ptr<IbSubnetManager> sm) const
{
    return DoInstall(client, server, {}, sm);
}

ApplicationContainer
IbPerftestHelper::InstallSweep(Ptr<Node> client,
                               Ptr<Node> server,
                               const std::vector<uint64_t>& sizes,
                               Ptr<IbSubnetManager> sm) const
{
    NS_ABORT_MSG_IF(sizes.empty(), "IbPerftestHelper::InstallSweep: no sizes");
    return DoInstall(client, server, sizes, sm);
}

ApplicationContainer
IbPerftestHelper::DoInstall(Ptr<Node> client,
                            Ptr<Node> server,
                            const std::vector<uint64_t>& sizes,
                            Ptr<IbSubnetManager> sm) const
{
    NS_ABORT_MSG_IF(client == server, "IbPerftestHelper::Install: client and server are one node");
    Ptr<IbPerftestApplication> c = m_factory.Create<IbPerftestApplication>();
    Ptr<IbPerftestApplication> s = m_factory.Create<IbPerftestApplication>();
    c->SetAttribute("Role", StringValue("client"));
    s->SetAttribute("Role", StringValue("server"));
    if (!sizes.empty())
    {
        c->SetSizes(sizes);
        s->SetSizes(sizes);
    }
    uint64_t largest = 0;
    for (uint64_t b : c->GetSizes())
    {
        largest = std::max(largest, b);
    }
    Ptr<IbQueuePair> cqp;
    Ptr<IbQueuePair> sqp;
    Ptr<IbMemoryRegion> cmr;
    Ptr<IbMemoryRegion> smr;
    CreateSide(client, c, largest, cqp, cmr);
    CreateSide(server, s, largest, sqp, smr);
    // The out-of-band exchange: each side learns the other's LID, QP number and PSN (to
    // connect) and rkey and address (to address its RDMA operations).
    IbHcaHelper::ConnectRc(cqp, sqp, sm);
    c->Setup(cqp, cmr, EndpointOf(sqp, smr));
    s->Setup(sqp, smr, EndpointOf(cqp, cmr));
    c->SetPeer(s);
    s->SetPeer(c);
    client->AddApplication(c);
    server->AddApplication(s);
    NS_LOG_LOGIC(IbPerftestApplication::TestName(c->GetTest())
                 << ": client node " << client->GetId() << " QP " << cqp->GetQpNum()
                 << ", server node " << server->GetId() << " QP " << sqp->GetQpNum());
    ApplicationContainer apps;
    apps.Add(c);
    apps.Add(s);
    return apps;
}

std::vector<uint64_t>
IbPerftestHelper::AllSizes()
{
    std::vector<uint64_t> out;
    for (uint64_t b = 2; b <= (1ULL << 23); b *= 2)
    {
        out.push_back(b);
    }
    return out;
}

bool
IbPerftestHelper::ParseSizes(const std::string& list,
                             std::vector<uint64_t>& sizes,
                             std::string* error)
{
    std::vector<uint64_t> out;
    size_t pos = 0;
    while (pos <= list.size())
    {
        const size_t comma = std::min(list.find(',', pos), list.size());
        std::string item = list.substr(pos, comma - pos);
        item.erase(std::remove_if(item.begin(),
                                  item.end(),
                                  [](unsigned char ch) { return std::isspace(ch); }),
                   item.end());
        uint64_t mult = 1;
        if (!item.empty())
        {
            const char last = static_cast<char>(std::toupper(item.back()));
            mult = last == 'K' ? 1024ULL : last == 'M' ? 1ULL << 20 : last == 'G' ? 1ULL << 30 : 1;
            if (mult != 1)
            {
                item.pop_back();
            }
        }
        char* end = nullptr;
        const unsigned long long v = item.empty() ? 0 : std::strtoull(item.c_str(), &end, 10);
        // v > 2^31 / mult, not v * mult > 2^31: the product can wrap (2^54 K is 0).
        if (item.empty() || *end != '\0' || v == 0 || v > 0x80000000ULL / mult)
        {
            if (error != nullptr)
            {
                *error = "size '" + list.substr(pos, comma - pos) + "' in \"" + list +
                         "\": expected a number of bytes from 1 to 2^31 (K, M, G suffixes allowed)";
            }
            return false;
        }
        out.push_back(v * mult);
        pos = comma + 1;
    }
    sizes = out;
    return true;
}

} // namespace ns3
