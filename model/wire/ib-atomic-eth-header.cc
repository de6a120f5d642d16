/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-atomic-eth-header.h"

#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbAtomicEthHeader");

NS_OBJECT_ENSURE_REGISTERED(IbAtomicEthHeader);

IbAtomicEthHeader::IbAtomicEthHeader()
    : m_va(0),
      m_rkey(0),
      m_swapOrAdd(0),
      m_compare(0)
{
}

TypeId
IbAtomicEthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbAtomicEthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbAtomicEthHeader>();
    return tid;
}

TypeId
IbAtomicEthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbAtomicEthHeader::GetSerializedSize() const
{
    return SIZE;
}

void
IbAtomicEthHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU64(m_va);
    start.WriteHtonU32(m_rkey);
    start.WriteHtonU64(m_swapOrAdd);
    start.WriteHtonU64(m_compare);
}

uint32_t
IbAtomicEthHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < SIZE)
    {
        NS_LOG_LOGIC("AtomicETH needs " << SIZE << " bytes, " << start.GetRemainingSize()
                                        << " left");
        return 0;
    }
    m_va = start.ReadNtohU64();
    m_rkey = start.ReadNtohU32();
    m_swapOrAdd = start.ReadNtohU64();
    m_compare = start.ReadNtohU64();
    return SIZE;
}

void
IbAtomicEthHeader::Print(std::ostream& os) const
{
    const auto flags = os.flags();
    const auto fill = os.fill();
    os << std::hex << std::setfill('0') << "Virtual Address: 0x" << std::setw(16) << m_va
       << ", Remote Key: 0x" << std::setw(8) << m_rkey << ", Swap (Or Add) Data: 0x"
       << std::setw(16) << m_swapOrAdd << ", Compare Data: 0x" << std::setw(16) << m_compare;
    os.flags(flags);
    os.fill(fill);
}

void
IbAtomicEthHeader::SetVirtualAddress(uint64_t va)
{
    m_va = va;
}

uint64_t
IbAtomicEthHeader::GetVirtualAddress() const
{
    return m_va;
}

void
IbAtomicEthHeader::SetRKey(uint32_t rkey)
{
    m_rkey = rkey;
}

uint32_t
IbAtomicEthHeader::GetRKey() const
{
    return m_rkey;
}

void
IbAtomicEthHeader::SetSwapOrAdd(uint64_t swapOrAdd)
{
    m_swapOrAdd = swapOrAdd;
}

uint64_t
IbAtomicEthHeader::GetSwapOrAdd() const
{
    return m_swapOrAdd;
}

void
IbAtomicEthHeader::SetCompare(uint64_t compare)
{
    m_compare = compare;
}

uint64_t
IbAtomicEthHeader::GetCompare() const
{
    return m_compare;
}

} // namespace ns3
