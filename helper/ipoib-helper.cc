/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ipoib-helper.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-multicast-group.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/icmpv6-l4-protocol.h"
#include "ns3/ipoib-net-device.h"
#include "ns3/ipv6-interface.h"
#include "ns3/ipv6-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/ndisc-cache.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IpoibHelper");

IpoibHelper::IpoibHelper()
    : m_mlid(0xC000)
{
    m_deviceFactory.SetTypeId("ns3::IpoibNetDevice");
    m_hcaHelper.SetHcaAttribute("DataMode", BooleanValue(true));
}

void
IpoibHelper::SetDeviceAttribute(std::string name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

void
IpoibHelper::SetHcaAttribute(std::string name, const AttributeValue& value)
{
    m_hcaHelper.SetHcaAttribute(name, value);
    m_hcaHelper.SetHcaAttribute("DataMode", BooleanValue(true));
}

void
IpoibHelper::SetBroadcastMlid(uint16_t mlid)
{
    m_mlid = mlid;
}

NetDeviceContainer
IpoibHelper::Install(const IbFabric& fabric) const
{
    NS_ABORT_MSG_UNLESS(fabric.subnetManager,
                        "IpoibHelper::Install: the fabric has not been brought up");
    std::vector<Ptr<IbHca>> hcas;
    uint32_t groupQpn = IbHca::FIRST_QPN;
    for (uint32_t i = 0; i < fabric.hosts.GetN(); ++i)
    {
        Ptr<Node> node = fabric.hosts.Get(i);
        Ptr<IbHca> hca = node->GetObject<IbHca>();
        if (!hca)
        {
            hca = m_hcaHelper.Install(node);
        }
        NS_ABORT_MSG_UNLESS(hca->IsDataMode(),
                            "IpoibHelper::Install: the IbHca of node "
                                << node->GetId() << " has DataMode=false; IPoIB needs true");
        uint32_t next = hca->GetNextQpn();
        groupQpn = std::max(groupQpn, next);
        hcas.push_back(hca);
    }
    NetDeviceContainer devices;
    std::vector<Ptr<IbNetDevice>> members;
    for (uint32_t i = 0; i < hcas.size(); ++i)
    {
        Ptr<IbHca> hca = hcas[i];
        uint32_t next = hca->GetNextQpn();
        if (next < groupQpn)
        {
            // Placeholder QPs (left in RESET) so that the IPoIB QP gets the group QPN.
            Ptr<IbCompletionQueue> cq = hca->CreateCq(1);
            for (; next < groupQpn; ++next)
            {
                hca->CreateQp(IbQpType::UD, cq, cq, 1, 1);
            }
        }
        Ptr<IpoibNetDevice> dev = m_deviceFactory.Create<IpoibNetDevice>();
        fabric.hosts.Get(i)->AddDevice(dev);
        dev->Setup(hca, fabric.subnetManager, 1);
        // Broadcast packets carry this QPN, and in Eui64 mode unicast packets too.
        NS_ABORT_MSG_UNLESS(dev->GetQueuePair()->GetQpNum() == groupQpn,
                            "IpoibHelper::Install: the IPoIB QP of node "
                                << fabric.hosts.Get(i)->GetId() << " got QPN "
                                << dev->GetQueuePair()->GetQpNum() << " instead of the group QPN "
                                << groupQpn
                                << "; IbHca numbers QPs consecutively, so its HCA got QPs "
                                   "from elsewhere during Install (an HCA shared by two hosts "
                                   "of the fabric?): give every host its own IbHca");
        dev->SetBroadcastGroup(m_mlid, groupQpn);
        devices.Add(dev);
        members.push_back(dev->GetIbPort());
    }
    IbMulticastGroup::Create(fabric.subnetManager, m_mlid, members);
    return devices;
}

void
IpoibHelper::AddIpv6Neighbours(IpoibNetDevice* dev,
                               std::shared_ptr<std::vector<IpoibNetDevice*>> peers)
{
    Ptr<Ipv6L3Protocol> ip = dev->GetNode()->GetObject<Ipv6L3Protocol>();
    Ptr<NdiscCache> cache = ip->GetInterface(ip->GetInterfaceForDevice(dev))->GetNdiscCache();
    NS_ABORT_MSG_UNLESS(cache,
                        "IpoibHelper::AssignIpv6: the IPv6 interface of the IPoIB device on node "
                            << dev->GetNode()->GetId() << " has no neighbour cache");
    for (IpoibNetDevice* peer : *peers)
    {
        if (peer == dev)
        {
            continue;
        }
        Ptr<Ipv6L3Protocol> ipp = peer->GetNode()->GetObject<Ipv6L3Protocol>();
        Ptr<Ipv6Interface> ifp = ipp->GetInterface(ipp->GetInterfaceForDevice(peer));
        for (uint32_t a = 0; a < ifp->GetNAddresses(); ++a)
        {
            const Ipv6Address addr = ifp->GetAddress(a).GetAddress();
            NdiscCache::Entry* e = cache->Lookup(addr);
            if (!e)
            {
                e = cache->Add(addr);
            }
            e->SetMacAddress(peer->GetAddress());
            e->MarkPermanent();
        }
    }
}

Ipv6InterfaceContainer
IpoibHelper::AssignIpv6(Ipv6AddressHelper& ipv6, const NetDeviceContainer& devices)
{
    NS_LOG_FUNCTION(&ipv6);
    std::vector<Ptr<IpoibNetDevice>> devs;
    uint32_t eui64 = 0;
    for (uint32_t i = 0; i < devices.GetN(); ++i)
    {
        Ptr<IpoibNetDevice> d = DynamicCast<IpoibNetDevice>(devices.Get(i));
        NS_ABORT_MSG_UNLESS(d && d->GetQueuePair(),
                            "IpoibHelper::AssignIpv6: device " << i
                                                               << " of the container is not "
                                                                  "an IpoibNetDevice installed by "
                                                                  "IpoibHelper::Install");
        eui64 += d->GetAddressMode() == IpoibNetDevice::EUI64 ? 1 : 0;
        Ptr<Node> node = d->GetNode();
        NS_ABORT_MSG_UNLESS(node && node->GetObject<Ipv6L3Protocol>() &&
                                node->GetObject<Icmpv6L4Protocol>(),
                            "IpoibHelper::AssignIpv6: node "
                                << (node ? node->GetId() : 0)
                                << " has no IPv6 stack: install InternetStackHelper first");
        devs.push_back(d);
    }
    if (eui64 > 0)
    {
        // Neighbour discovery works with 8-byte addresses: the ordinary assignment.
        NS_ABORT_MSG_UNLESS(eui64 == devs.size(),
                            "IpoibHelper::AssignIpv6: " << eui64 << " of the " << devs.size()
                                                        << " devices have HardwareAddressMode="
                                                           "Eui64, the others Ipoib20: give "
                                                           "the devices of one subnet one mode");
        return ipv6.Assign(devices);
    }
    for (const auto& d : devs)
    {
        // Before Assign adds addresses: it schedules DAD for each one.
        d->GetNode()->GetObject<Icmpv6L4Protocol>()->SetAttribute("DAD", BooleanValue(false));
    }
    for (const auto& d : devs)
    {
        d->SetPresentInterfaceId(true);
    }
    Ipv6InterfaceContainer ifs = ipv6.Assign(devices);
    for (const auto& d : devs)
    {
        d->SetPresentInterfaceId(false);
    }
    // Static neighbour entries: every device learns every other device's addresses, now
    // and after each link change of its port (ns-3 flushes the neighbour cache then, e.g.
    // when the link comes up at the start of the simulation).
    auto peers = std::make_shared<std::vector<IpoibNetDevice*>>();
    for (const auto& d : devs)
    {
        peers->push_back(PeekPointer(d));
    }
    for (const auto& d : devs)
    {
        AddIpv6Neighbours(PeekPointer(d), peers);
        d->AddLinkChangeCallback(
            MakeBoundCallback(&IpoibHelper::AddIpv6Neighbours, PeekPointer(d), peers));
    }
    return ifs;
}

} // namespace ns3
