/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "eth-pad-trailer.h"

#include "ns3/assert.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("EthPadTrailer");

NS_OBJECT_ENSURE_REGISTERED(EthPadTrailer);

EthPadTrailer::EthPadTrailer(uint8_t bytes)
    : m_bytes(bytes)
{
    NS_ASSERT_MSG(bytes <= MAX_BYTES,
                  "an Ethernet pad is 0.." << MAX_BYTES << " bytes, not " << unsigned(bytes));
}

TypeId
EthPadTrailer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::EthPadTrailer")
                            .SetParent<Trailer>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<EthPadTrailer>();
    return tid;
}

TypeId
EthPadTrailer::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
EthPadTrailer::GetSerializedSize() const
{
    return m_bytes;
}

void
EthPadTrailer::Serialize(Buffer::Iterator end) const
{
    end.Prev(m_bytes);
    end.WriteU8(0, m_bytes);
}

uint32_t
EthPadTrailer::Deserialize(Buffer::Iterator end)
{
    if (end.GetSize() < m_bytes)
    {
        return 0;
    }
    return m_bytes;
}

uint32_t
EthPadTrailer::Deserialize(Buffer::Iterator start, Buffer::Iterator end)
{
    m_bytes = static_cast<uint8_t>(end.GetDistanceFrom(start));
    return m_bytes;
}

void
EthPadTrailer::Print(std::ostream& os) const
{
    os << "Pad: " << unsigned(m_bytes) << " bytes";
}

} // namespace ns3
