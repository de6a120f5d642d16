/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-raw-header.h"

#include "ns3/assert.h"
#include "ns3/log.h"

#include <iomanip>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthRawHeader");

NS_OBJECT_ENSURE_REGISTERED(EthRawHeader);

EthRawHeader::EthRawHeader(uint32_t size)
    : m_size(size),
      m_bytes{}
{
    NS_ASSERT_MSG(size <= MAX_BYTES,
                  "EthRawHeader holds at most " << MAX_BYTES << " bytes, not " << size);
}

TypeId
EthRawHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::EthRawHeader")
                            .SetParent<Header>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<EthRawHeader>();
    return tid;
}

TypeId
EthRawHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
EthRawHeader::GetSerializedSize() const
{
    return m_size;
}

void
EthRawHeader::Serialize(Buffer::Iterator start) const
{
    start.Write(m_bytes, m_size);
}

uint32_t
EthRawHeader::Deserialize(Buffer::Iterator start)
{
    if (start.GetRemainingSize() < m_size)
    {
        return 0;
    }
    start.Read(m_bytes, m_size);
    return m_size;
}

void
EthRawHeader::Print(std::ostream& os) const
{
    os << m_size << " raw bytes";
    const std::ios_base::fmtflags flags = os.flags();
    const char fill = os.fill();
    for (uint32_t i = 0; i < m_size; ++i)
    {
        os << (i == 0 ? ": " : " ") << std::hex << std::setw(2) << std::setfill('0')
           << unsigned(m_bytes[i]);
    }
    os.flags(flags);
    os.fill(fill);
}

} // namespace ns3
