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
#include "ns3/ipoib-net-device.h"
#include "ns3/log.h"

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
        uint32_t next = IbHca::FIRST_QPN;
        while (hca->GetQp(next))
        {
            ++next;
        }
        groupQpn = std::max(groupQpn, next);
        hcas.push_back(hca);
    }
    NetDeviceContainer devices;
    std::vector<Ptr<IbNetDevice>> members;
    for (uint32_t i = 0; i < hcas.size(); ++i)
    {
        Ptr<IbHca> hca = hcas[i];
        uint32_t next = IbHca::FIRST_QPN;
        while (hca->GetQp(next))
        {
            ++next;
        }
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
        NS_ASSERT(dev->GetQueuePair()->GetQpNum() == groupQpn);
        dev->SetBroadcastGroup(m_mlid, groupQpn);
        devices.Add(dev);
        members.push_back(dev->GetIbPort());
    }
    IbMulticastGroup::Create(fabric.subnetManager, m_mlid, members);
    return devices;
}

} // namespace ns3
