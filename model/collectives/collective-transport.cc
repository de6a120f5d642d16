/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-transport.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveTransport");

NS_OBJECT_ENSURE_REGISTERED(CollectiveTransport);

TypeId
CollectiveTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveTransport").SetParent<Object>().SetGroupName("Infiniband");
    return tid;
}

CollectiveTransport::CollectiveTransport()
    : m_msgsSent(0),
      m_bytesSent(0)
{
}

CollectiveTransport::~CollectiveTransport() = default;

void
CollectiveTransport::SetReceiveCallback(ReceiveCallback cb)
{
    // Two communicators on one transport would both number their operations from 1 and
    // match each other's messages: refuse the second rather than mix them.
    NS_ABORT_MSG_IF(!m_receive.IsNull() && !cb.IsNull(),
                    "CollectiveTransport: this transport already serves a communicator; give "
                    "each communicator its own transport (CollectiveHelper does)");
    m_receive = cb;
}

uint64_t
CollectiveTransport::GetMessagesSent() const
{
    return m_msgsSent;
}

uint64_t
CollectiveTransport::GetBytesSent() const
{
    return m_bytesSent;
}

void
CollectiveTransport::DoDispose()
{
    m_receive = MakeNullCallback<void, uint32_t, uint32_t, uint32_t, uint64_t, const uint8_t*>();
    Object::DoDispose();
}

void
CollectiveTransport::Deliver(uint32_t src,
                             uint32_t dst,
                             uint32_t tag,
                             uint64_t bytes,
                             const uint8_t* data)
{
    NS_LOG_FUNCTION(this << src << dst << tag << bytes);
    if (!m_receive.IsNull())
    {
        m_receive(src, dst, tag, bytes, data);
    }
}

void
CollectiveTransport::CountSent(uint64_t bytes)
{
    ++m_msgsSent;
    m_bytesSent += bytes;
}

} // namespace ns3
