/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-pad-trailer.h"

#include "ns3/assert.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPadTrailer");

NS_OBJECT_ENSURE_REGISTERED(IbPadTrailer);

IbPadTrailer::IbPadTrailer(uint8_t bytes)
    : m_bytes(bytes)
{
    NS_ASSERT_MSG(bytes <= 3, "an IBA pad is 0..3 bytes, not " << unsigned(bytes));
}

TypeId
IbPadTrailer::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbPadTrailer")
                            .SetParent<Trailer>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbPadTrailer>();
    return tid;
}

TypeId
IbPadTrailer::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
IbPadTrailer::GetSerializedSize() const
{
    return m_bytes;
}

void
IbPadTrailer::Serialize(Buffer::Iterator end) const
{
    end.Prev(m_bytes);
    for (uint8_t i = 0; i < m_bytes; ++i)
    {
        end.WriteU8(0);
    }
}

uint32_t
IbPadTrailer::Deserialize(Buffer::Iterator end)
{
    if (end.GetSize() < m_bytes)
    {
        return 0;
    }
    return m_bytes;
}

uint32_t
IbPadTrailer::Deserialize(Buffer::Iterator start, Buffer::Iterator end)
{
    m_bytes = static_cast<uint8_t>(end.GetDistanceFrom(start));
    return m_bytes;
}

void
IbPadTrailer::Print(std::ostream& os) const
{
    os << "Pad: " << unsigned(m_bytes) << " bytes";
}

} // namespace ns3
