/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-atomic-ack-eth-header.h"

#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbAtomicAckEthHeader");

NS_OBJECT_ENSURE_REGISTERED(IbAtomicAckEthHeader);

IbAtomicAckEthHeader::IbAtomicAckEthHeader()
    : m_originalData(0)
{
}

TypeId
IbAtomicAckEthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbAtomicAckEthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbAtomicAckEthHeader>();
    return tid;
}

TypeId
IbAtomicAckEthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbAtomicAckEthHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbAtomicAckEthHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(m_originalData);
}

uint32_t
IbAtomicAckEthHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("AtomicAckETH needs " << SIZE << " bytes, " << start.GetRemainingSize()
                                           << " left");
        return 0;
    }
    m_originalData = start.ReadNtohU64();
    return SIZE;
}

void
IbAtomicAckEthHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << "Original Remote Data: 0x" << std::hex << std::setfill('0') << std::setw(16)
       << m_originalData;
    os.flags(flags);
    os.fill(fill);
}

void
IbAtomicAckEthHeader::SetOriginalData(uint64_t originalData)
{
    m_originalData = originalData;
}

uint64_t
IbAtomicAckEthHeader::GetOriginalData() const
{
    return m_originalData;
}

} // namespace ns3
