/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-tcp-transport.h"

#include "ns3/abort.h"
#include "ns3/ib-range-checker.h"
#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveTcpTransport");

NS_OBJECT_ENSURE_REGISTERED(CollectiveTcpTransport);

namespace
{
/// Frame header bytes: tag (4, bit 31 = has data) and length (8), little endian.
constexpr uint32_t HEADER_BYTES = 12;
/// Hello bytes: the connecting rank.
constexpr uint32_t HELLO_BYTES = 4;
/// Tag bit: the payload is real.
constexpr uint32_t HAS_DATA = 0x80000000u;
} // namespace

TypeId
CollectiveTcpTransport::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveTcpTransport")
            .SetParent<CollectiveTransport>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveTcpTransport>()
            .AddAttribute("Port",
                          "TCP port every rank listens on.",
                          UintegerValue(5000),
                          MakeUintegerAccessor(&CollectiveTcpTransport::m_port),
                          MakeIbUintegerChecker<uint16_t>("CollectiveTcpTransport", "Port", 1))
            .AddAttribute(
                "SegmentSize",
                "TCP maximum segment size of the connections (1448 fits a "
                "1500-byte MTU with timestamps).",
                UintegerValue(1448),
                MakeUintegerAccessor(&CollectiveTcpTransport::m_segmentSize),
                MakeIbUintegerChecker<uint32_t>("CollectiveTcpTransport", "SegmentSize", 64))
            .AddAttribute(
                "BufferSize",
                "TCP send and receive buffer of each connection, bytes.",
                UintegerValue(4 * 1024 * 1024),
                MakeUintegerAccessor(&CollectiveTcpTransport::m_bufSize),
                MakeIbUintegerChecker<uint32_t>("CollectiveTcpTransport", "BufferSize", 4096));
    return tid;
}

CollectiveTcpTransport::CollectiveTcpTransport()
    : m_port(5000),
      m_segmentSize(1448),
      m_bufSize(4 * 1024 * 1024),
      m_connected(0)
{
}

CollectiveTcpTransport::~CollectiveTcpTransport()
{
    // the sockets live on with their nodes: make them forget this object
    for (auto& [k, ep] : m_eps)
    {
        if (ep->socket)
        {
            ep->socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
            ep->socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
            ForgetCloses(ep->socket);
        }
    }
    for (auto& ep : m_pendingAccept)
    {
        ep->socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    }
}

uint32_t
CollectiveTcpTransport::GetNRanks() const
{
    return m_nodes.size();
}

bool
CollectiveTcpTransport::IsDataMode() const
{
    return true;
}

uint32_t
CollectiveTcpTransport::GetNConnected() const
{
    return m_connected;
}

void
CollectiveTcpTransport::Setup(const std::vector<Ptr<Node>>& nodes,
                              const std::vector<Ipv4Address>& addresses)
{
    NS_LOG_FUNCTION(this << nodes.size());
    NS_ABORT_MSG_UNLESS(nodes.size() == addresses.size() && !nodes.empty(),
                        "CollectiveTcpTransport: one address per node needed");
    m_nodes = nodes;
    m_addresses = addresses;
    const uint32_t n = nodes.size();
    for (uint32_t a = 0; a < n; ++a)
    {
        for (uint32_t b = 0; b < n; ++b)
        {
            if (a == b)
            {
                continue;
            }
            auto ep = std::make_unique<Endpoint>();
            ep->self = a;
            ep->peer = b;
            ep->helloDone = true;
            if (a < b)
            {
                OutFrame hello;
                hello.header.resize(HELLO_BYTES);
                std::memcpy(hello.header.data(), &a, HELLO_BYTES);
                ep->tx.push_back(std::move(hello));
            }
            m_eps[(uint64_t(a) << 32) | b] = std::move(ep);
        }
    }
    // the sockets are opened from an event: the nodes' stacks are initialized by then
    Simulator::ScheduleNow(&CollectiveTcpTransport::OpenSockets, this);
}

Ptr<Socket>
CollectiveTcpTransport::NewSocket(uint32_t rank) const
{
    Ptr<Socket> s = Socket::CreateSocket(m_nodes[rank], TcpSocketFactory::GetTypeId());
    s->SetAttribute("SegmentSize", UintegerValue(m_segmentSize));
    s->SetAttribute("SndBufSize", UintegerValue(m_bufSize));
    s->SetAttribute("RcvBufSize", UintegerValue(m_bufSize));
    return s;
}

void
CollectiveTcpTransport::OpenSockets()
{
    for (uint32_t r = 0; r < m_nodes.size(); ++r)
    {
        Ptr<Socket> l = NewSocket(r);
        NS_ABORT_MSG_UNLESS(l->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port)) == 0,
                            "CollectiveTcpTransport: cannot bind port " << m_port << " on rank "
                                                                        << r);
        l->Listen();
        l->SetAcceptCallback(MakeCallback(&CollectiveTcpTransport::AcceptRequest, this),
                             MakeCallback(&CollectiveTcpTransport::Accepted, this, r));
        m_listeners.push_back(l);
    }
    m_open = true;
    for (const auto& [a, b] : m_toDial)
    {
        Connect(a, b);
    }
    m_toDial.clear();
}

void
CollectiveTcpTransport::Dial(uint32_t a, uint32_t b)
{
    Endpoint* ep = m_eps.at((uint64_t(a) << 32) | b).get();
    if (ep->dialed)
    {
        return;
    }
    ep->dialed = true;
    if (m_open)
    {
        Connect(a, b);
    }
    else
    {
        m_toDial.emplace_back(a, b); // before the listeners exist: once they do
    }
}

void
CollectiveTcpTransport::Connect(uint32_t a, uint32_t b)
{
    Endpoint* ep = m_eps.at((uint64_t(a) << 32) | b).get();
    Ptr<Socket> s = NewSocket(a);
    s->Bind();
    ep->socket = s;
    s->SetConnectCallback(MakeCallback(&CollectiveTcpTransport::Connected, this, ep),
                          MakeCallback(&CollectiveTcpTransport::ConnectFailed, this, ep));
    s->SetRecvCallback(MakeCallback(&CollectiveTcpTransport::HandleRead, this, ep));
    s->SetSendCallback(MakeCallback(&CollectiveTcpTransport::HandleSend, this, ep));
    s->SetCloseCallbacks(MakeCallback(&CollectiveTcpTransport::Closed, this, ep, false),
                         MakeCallback(&CollectiveTcpTransport::Closed, this, ep, true));
    s->Connect(InetSocketAddress(m_addresses[b], m_port));
}

void
CollectiveTcpTransport::Connected(Endpoint* ep, Ptr<Socket> socket)
{
    NS_LOG_FUNCTION(this << ep->self << ep->peer);
    ep->connected = true;
    ++m_connected;
    Pump(ep);
}

void
CollectiveTcpTransport::Closed(Endpoint* ep, bool error, Ptr<Socket> socket)
{
    NS_FATAL_ERROR("CollectiveTcpTransport: the TCP connection between rank "
                   << ep->self << " and rank " << ep->peer << " "
                   << (error ? "failed (socket error " + std::to_string(socket->GetErrno()) + ")"
                             : std::string("was closed by the peer"))
                   << " at " << Simulator::Now().As(Time::US)
                   << " while the communicator uses it; a collective over it would wait "
                      "forever. Keep both nodes' TCP stacks and links up during the run");
}

void
CollectiveTcpTransport::ForgetCloses(Ptr<Socket> socket)
{
    socket->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                              MakeNullCallback<void, Ptr<Socket>>());
}

void
CollectiveTcpTransport::ConnectFailed(Endpoint* ep, Ptr<Socket> socket)
{
    NS_FATAL_ERROR("CollectiveTcpTransport: rank "
                   << ep->self << " (node " << m_nodes[ep->self]->GetId()
                   << ") could not connect to rank " << ep->peer << " at " << m_addresses[ep->peer]
                   << " port " << m_port
                   << "; check that the address is the rank's on a network both reach "
                      "(InstallTcp(nodes, interfaces) names it) and that routing is set up");
}

bool
CollectiveTcpTransport::AcceptRequest(Ptr<Socket> socket, const Address& from)
{
    return true;
}

void
CollectiveTcpTransport::Accepted(uint32_t rank, Ptr<Socket> socket, const Address& from)
{
    NS_LOG_FUNCTION(this << rank << from);
    auto ep = std::make_unique<Endpoint>();
    ep->self = rank;
    ep->socket = socket;
    ep->helloDone = false;
    socket->SetRecvCallback(MakeCallback(&CollectiveTcpTransport::HandleRead, this, ep.get()));
    m_pendingAccept.push_back(std::move(ep));
}

void
CollectiveTcpTransport::HandleRead(Endpoint* ep, Ptr<Socket> socket)
{
    std::vector<uint8_t> buf;
    Ptr<Packet> p;
    while ((p = socket->Recv()) && p->GetSize() > 0)
    {
        buf.resize(p->GetSize());
        p->CopyData(buf.data(), buf.size());
        const uint8_t* q = buf.data();
        uint32_t n = buf.size();
        if (!ep->helloDone)
        {
            const uint32_t take = std::min<uint32_t>(n, HELLO_BYTES - ep->hdr.size());
            ep->hdr.insert(ep->hdr.end(), q, q + take);
            q += take;
            n -= take;
            if (ep->hdr.size() < HELLO_BYTES)
            {
                continue;
            }
            uint32_t peer;
            std::memcpy(&peer, ep->hdr.data(), HELLO_BYTES);
            NS_ABORT_MSG_UNLESS(peer < m_nodes.size() && peer != ep->self,
                                "CollectiveTcpTransport: bad hello");
            Endpoint* real = m_eps.at((uint64_t(ep->self) << 32) | peer).get();
            real->socket = socket;
            real->connected = true;
            ++m_connected;
            socket->SetRecvCallback(MakeCallback(&CollectiveTcpTransport::HandleRead, this, real));
            socket->SetSendCallback(MakeCallback(&CollectiveTcpTransport::HandleSend, this, real));
            socket->SetCloseCallbacks(
                MakeCallback(&CollectiveTcpTransport::Closed, this, real, false),
                MakeCallback(&CollectiveTcpTransport::Closed, this, real, true));
            ep->hdr.clear();
            ep->helloDone = true; // the pending record is dead from here on
            ep = real;
            Pump(ep);
        }
        Consume(ep, q, n);
    }
}

void
CollectiveTcpTransport::Consume(Endpoint* ep, const uint8_t* p, uint32_t n)
{
    while (n > 0)
    {
        if (!ep->inPayload)
        {
            const uint32_t take = std::min<uint32_t>(n, HEADER_BYTES - ep->hdr.size());
            ep->hdr.insert(ep->hdr.end(), p, p + take);
            p += take;
            n -= take;
            if (ep->hdr.size() < HEADER_BYTES)
            {
                return;
            }
            uint32_t tag;
            std::memcpy(&tag, ep->hdr.data(), 4);
            std::memcpy(&ep->rxLen, ep->hdr.data() + 4, 8);
            ep->hdr.clear();
            ep->rxHasData = (tag & HAS_DATA) != 0;
            ep->rxTag = tag & ~HAS_DATA;
            ep->rxGot = 0;
            ep->rxData.clear();
            ep->inPayload = true;
        }
        const uint64_t take = std::min<uint64_t>(n, ep->rxLen - ep->rxGot);
        if (ep->rxHasData)
        {
            ep->rxData.insert(ep->rxData.end(), p, p + take);
        }
        p += take;
        n -= take;
        ep->rxGot += take;
        if (ep->rxGot == ep->rxLen)
        {
            ep->inPayload = false;
            std::vector<uint8_t> data;
            data.swap(ep->rxData);
            Deliver(ep->peer,
                    ep->self,
                    ep->rxTag,
                    ep->rxLen,
                    ep->rxHasData ? data.data() : nullptr);
        }
    }
}

void
CollectiveTcpTransport::HandleSend(Endpoint* ep, Ptr<Socket> socket, uint32_t available)
{
    Pump(ep);
}

void
CollectiveTcpTransport::Send(uint32_t src,
                             uint32_t dst,
                             uint32_t tag,
                             uint64_t bytes,
                             const uint8_t* data,
                             Callback<void> sent)
{
    NS_LOG_FUNCTION(this << src << dst << tag << bytes);
    NS_ABORT_MSG_IF(src == dst || src >= m_nodes.size() || dst >= m_nodes.size(),
                    "CollectiveTcpTransport: bad ranks " << src << " -> " << dst);
    NS_ABORT_MSG_IF(tag & HAS_DATA, "CollectiveTcpTransport: tag uses bit 31");
    Endpoint* ep = m_eps.at((uint64_t(src) << 32) | dst).get();
    OutFrame f;
    f.header.resize(HEADER_BYTES);
    const uint32_t t = tag | (data != nullptr ? HAS_DATA : 0);
    std::memcpy(f.header.data(), &t, 4);
    std::memcpy(f.header.data() + 4, &bytes, 8);
    f.bytes = bytes;
    if (data != nullptr)
    {
        f.data.assign(data, data + bytes);
        f.hasData = true;
    }
    f.sent = sent;
    CountSent(bytes);
    ep->tx.push_back(std::move(f));
    Dial(std::min(src, dst), std::max(src, dst));
    Pump(ep);
}

void
CollectiveTcpTransport::Pump(Endpoint* ep)
{
    if (!ep->connected)
    {
        return;
    }
    std::vector<Callback<void>> done;
    while (!ep->tx.empty())
    {
        OutFrame& f = ep->tx.front();
        const uint64_t total = f.header.size() + f.bytes;
        while (f.written < total)
        {
            const uint32_t avail = ep->socket->GetTxAvailable();
            if (avail == 0)
            {
                break;
            }
            Ptr<Packet> p;
            uint32_t len;
            if (f.written < f.header.size())
            {
                len = std::min<uint32_t>(avail, f.header.size() - f.written);
                p = Create<Packet>(f.header.data() + f.written, len);
            }
            else
            {
                const uint64_t off = f.written - f.header.size();
                len = static_cast<uint32_t>(std::min<uint64_t>(avail, f.bytes - off));
                p = f.hasData ? Create<Packet>(f.data.data() + off, len) : Create<Packet>(len);
            }
            const int r = ep->socket->Send(p);
            if (r < 0)
            {
                break;
            }
            f.written += len;
        }
        if (f.written < total)
        {
            break;
        }
        if (!f.sent.IsNull())
        {
            done.push_back(f.sent);
        }
        ep->tx.pop_front();
    }
    for (auto& cb : done)
    {
        cb();
    }
}

void
CollectiveTcpTransport::DoDispose()
{
    for (auto& [k, ep] : m_eps)
    {
        if (ep->socket)
        {
            ep->socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
            ep->socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
            ForgetCloses(ep->socket);
            ep->socket->Close();
        }
    }
    for (auto& ep : m_pendingAccept)
    {
        // accepted, its rank not read yet: it must not call back into a freed endpoint
        ep->socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        ForgetCloses(ep->socket);
        ep->socket->Close();
    }
    for (auto& l : m_listeners)
    {
        l->Close();
    }
    m_eps.clear();
    m_pendingAccept.clear();
    m_listeners.clear();
    m_nodes.clear();
    CollectiveTransport::DoDispose();
}

} // namespace ns3
