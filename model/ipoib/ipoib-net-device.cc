/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ipoib-net-device.h"

#include "ipoib-header.h"

#include "ns3/abort.h"
#include "ns3/channel.h"
#include "ns3/enum.h"
#include "ns3/ib-completion-queue.h"
#include "ns3/ib-hca.h"
#include "ns3/ib-memory-region.h"
#include "ns3/ib-net-device.h"
#include "ns3/ib-ns3-compat.h"
#include "ns3/ib-queue-pair.h"
#include "ns3/ib-range-checker.h"
#include "ns3/ib-subnet-manager.h"
#include "ns3/log.h"
#include "ns3/mac64-address.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cstdio>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IpoibNetDevice");

NS_OBJECT_ENSURE_REGISTERED(IpoibNetDevice);

namespace
{

/// Bytes of the GRH space at the start of every UD receive buffer.
constexpr uint32_t kGrhBytes = 40;

/**
 * At most this many packets wait in one sender's FIFO at a receiver (see
 * IpoibNetDevice::SentFifo): beyond, the oldest is forgotten (its packet is delivered with
 * the bytes only). Reached only when a receiver's QP drops every packet (e.g. a wrong
 * Q_Key); the packets one sender has in flight to one receiver stay far below it.
 */
constexpr std::size_t kMaxSentFifo = 65536;

/// The universal/local bit of an EUI-64 (RFC 4291 appendix A), in a 64-bit integer.
constexpr uint64_t kUniversalLocalBit = 0x0200000000000000ULL;

/// Bytes of an 8-byte link-layer address as neighbour discovery reads it from an option:
/// the option's 16 bytes less its type and length.
constexpr uint8_t kNdEui64Bytes = 14;

/**
 * @return the address type ns-3 3.44 and later give an 8-byte link-layer address that
 *         neighbour discovery read from an option (a 14-byte "MacAddress", which ns-3
 *         itself does not register, and without which its decoder stops); 0 on older
 *         releases, whose decoder leaves it untyped
 */
uint8_t
NdEui64Type()
{
    static const uint8_t type = ib_compat::ADDRESSES_HAVE_KINDS
                                    ? ib_compat::RegisterAddressType("MacAddress", kNdEui64Bytes)
                                    : 0;
    return type;
}

/// Registered when the library loads, before any packet is decoded.
const uint8_t g_ndEui64Type = NdEui64Type();

/**
 * @param a an address
 * @return whether it is an 8-byte (Eui64 mode) hardware address: a Mac64Address, or one
 *         that neighbour discovery learnt from a link-layer address option
 */
bool
IsEui64Address(const Address& a)
{
    return Mac64Address::IsMatchingType(a) ||
           (ib_compat::ADDRESSES_HAVE_KINDS && a.CheckCompatible(NdEui64Type(), kNdEui64Bytes));
}

} // namespace

TypeId
IpoibNetDevice::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::IpoibNetDevice")
            .SetParent<NetDevice>()
            .SetGroupName("Infiniband")
            .AddConstructor<IpoibNetDevice>()
            .AddAttribute(
                "Mtu",
                "IP MTU; 0 = the IB port MTU minus the 4-byte IPoIB header (2044 "
                "for a 2048-byte IB MTU, 4092 for 4096), set by Setup().",
                UintegerValue(0),
                MakeUintegerAccessor(&IpoibNetDevice::SetMtuAttribute, &IpoibNetDevice::GetMtu),
                MakeUintegerChecker<uint16_t>()) // checked by SetMtuAttribute
            .AddAttribute("Qkey",
                          "Q_Key of the IPoIB UD queue pair (the broadcast group's Q_Key).",
                          UintegerValue(0x00000B1B),
                          MakeUintegerAccessor(&IpoibNetDevice::m_qkey),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Pkey",
                          "Partition key, used in the broadcast GID only: partitions are "
                          "not modelled (every device joins one broadcast group and no "
                          "P_Key is checked). 0x0000 and 0x8000 are refused.",
                          UintegerValue(0xFFFF),
                          MakeUintegerAccessor(&IpoibNetDevice::m_pkey),
                          MakeUintegerChecker<uint16_t>())
            .AddAttribute(
                "HardwareAddressMode",
                "The device's ns-3 hardware address. Ipoib20: the 20-byte RFC 4391 address "
                "(flags, QPN, GID), carried by ARP as Linux ipoib does; IPv6 only through "
                "IpoibHelper::AssignIpv6, and ARP only with an ns-3 built without asserts. "
                "Eui64: the port's 8-byte IPv6 interface identifier (GUID with the "
                "universal/local bit inverted) as a Mac64Address; ARP and IPv6 neighbour "
                "discovery, DAD and SLAAC work unmodified on any ns-3 build, but their "
                "payloads are not RFC 4391's. Set before the device is used (IpoibHelper::"
                "SetDeviceAttribute).",
                EnumValue(IpoibNetDevice::IPOIB20),
                ib_compat::MakeEnumAccessor<IpoibNetDevice::AddressMode>(
                    &IpoibNetDevice::SetAddressMode,
                    &IpoibNetDevice::GetAddressMode),
                MakeEnumChecker(IpoibNetDevice::IPOIB20, "Ipoib20", IpoibNetDevice::EUI64, "Eui64"))
            .AddAttribute("SendBuffers",
                          "Registered send buffers (send queue depth of the UD QP).",
                          UintegerValue(256),
                          MakeUintegerAccessor(&IpoibNetDevice::m_sendBuffers),
                          MakeIbUintegerChecker<uint32_t>("IpoibNetDevice", "SendBuffers", 1))
            .AddAttribute("RecvBuffers",
                          "Receive WRs kept posted on the UD QP.",
                          UintegerValue(512),
                          MakeUintegerAccessor(&IpoibNetDevice::m_recvBuffers),
                          MakeIbUintegerChecker<uint32_t>("IpoibNetDevice", "RecvBuffers", 1))
            .AddAttribute("TxQueueSize",
                          "Packets that may wait for a free send buffer before drops.",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&IpoibNetDevice::m_txQueueSize),
                          MakeUintegerChecker<uint32_t>())
            .AddTraceSource("MacTx",
                            "A packet accepted for transmission (without the IPoIB header).",
                            MakeTraceSourceAccessor(&IpoibNetDevice::m_macTxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacTxDrop",
                            "A packet dropped before transmission (unresolved, FIFO full).",
                            MakeTraceSourceAccessor(&IpoibNetDevice::m_macTxDropTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacRx",
                            "A packet received and handed up (without the IPoIB header).",
                            MakeTraceSourceAccessor(&IpoibNetDevice::m_macRxTrace),
                            "ns3::Packet::TracedCallback")
            .AddTraceSource("MacRxDrop",
                            "A received packet dropped (error completion, malformed).",
                            MakeTraceSourceAccessor(&IpoibNetDevice::m_macRxDropTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

IpoibNetDevice::IpoibNetDevice()
    : m_ifIndex(0),
      m_portNum(1),
      m_slotSize(0),
      m_recvSlotSize(0),
      m_presentInterfaceId(false),
      m_addressMode(IPOIB20),
      m_mlid(0),
      m_groupQpn(0),
      m_mtu(0),
      m_qkey(0x00000B1B),
      m_sendBuffers(256),
      m_recvBuffers(512),
      m_txQueueSize(1000),
      m_pkey(0xFFFF),
      m_unresolvedDrops(0),
      m_txQueueDrops(0)
{
    NS_LOG_FUNCTION(this);
}

IpoibNetDevice::~IpoibNetDevice()
{
    NS_LOG_FUNCTION(this);
}

void
IpoibNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    if (m_sendCq)
    {
        m_sendCq->SetCompletionCallback(Callback<void, const IbWorkCompletion&>());
    }
    if (m_recvCq)
    {
        m_recvCq->SetCompletionCallback(Callback<void, const IbWorkCompletion&>());
    }
    m_txQueue.clear();
    m_routes.clear();
    m_lastRoute = nullptr;
    m_lids.clear();
    m_node = nullptr;
    m_hca = nullptr;
    m_sm = nullptr;
    m_port = nullptr;
    m_qp = nullptr;
    m_sendCq = nullptr;
    m_recvCq = nullptr;
    m_sendMr = nullptr;
    m_recvMr = nullptr;
    m_rxCallback =
        MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&>();
    m_promiscCallback = NetDevice::PromiscReceiveCallback();
    NetDevice::DoDispose();
}

void
IpoibNetDevice::Setup(Ptr<IbHca> hca, Ptr<IbSubnetManager> sm, uint8_t port)
{
    NS_LOG_FUNCTION(this << hca << sm << unsigned(port));
    NS_ABORT_MSG_IF(m_qp, "IpoibNetDevice::Setup: already set up");
    if ((m_pkey & 0x7FFF) == 0)
    {
        char pkey[8];
        std::snprintf(pkey, sizeof(pkey), "0x%04X", m_pkey);
        NS_ABORT_MSG("IpoibNetDevice::Setup: Pkey=" << pkey
                                                    << " is not a valid P_Key (0x0000 and "
                                                       "0x8000 are reserved); use e.g. 0xFFFF");
    }
    NS_ABORT_MSG_UNLESS(hca && sm, "IpoibNetDevice::Setup: needs an HCA and a subnet manager");
    // The hardware address carries the CA's node GUID, not a port GUID, and Resolve takes
    // a destination GUID to the CA's port 1: a device on another port would be reached at
    // port 1's LID.
    NS_ABORT_MSG_IF(port != 1,
                    "IpoibNetDevice::Setup: port " << unsigned(port)
                                                   << ": IPoIB is modelled on port 1 of a CA "
                                                      "only (its address names the CA, and "
                                                      "peers reach it at port 1); use port 1");
    NS_ABORT_MSG_UNLESS(hca->IsDataMode(),
                        "IpoibNetDevice::Setup: the IbHca must have DataMode=true (IPoIB "
                        "carries the IP packets' bytes)");
    m_hca = hca;
    m_sm = sm;
    m_portNum = port;
    m_port = hca->GetPort(port);
    m_portCameUp = m_port->IsLinkUp();
    m_port->AddLinkChangeCallback(MakeCallback(&IpoibNetDevice::PortLinkChanged, this));
    const uint32_t ibMtu = m_port->GetIbMtu();
    if (m_mtu == 0)
    {
        m_mtu = static_cast<uint16_t>(ibMtu - IpoibHeader::SIZE);
    }
    NS_ABORT_MSG_IF(m_mtu + IpoibHeader::SIZE > ibMtu,
                    "IpoibNetDevice: MTU " << m_mtu << " + 4 exceeds the IB MTU " << ibMtu);
    m_slotSize = ibMtu;
    m_recvSlotSize = ibMtu + kGrhBytes;
    m_scratch.assign(m_recvSlotSize, 0);
    m_sendCq = hca->CreateCq(m_sendBuffers + 16);
    m_recvCq = hca->CreateCq(m_recvBuffers + 16);
    m_qp = hca->CreateQp(IbQpType::UD, m_sendCq, m_recvCq, m_sendBuffers, m_recvBuffers);
    IbQpAttr attr;
    attr.portNum = port;
    attr.qkey = m_qkey;
    for (IbQpState s : {IbQpState::INIT, IbQpState::RTR, IbQpState::RTS})
    {
        attr.state = s;
        std::string err;
        NS_ABORT_MSG_UNLESS(m_qp->Modify(attr, &err), "IpoibNetDevice::Setup: " << err);
    }
    m_sendMr = hca->RegisterMemory(uint64_t(m_sendBuffers) * m_slotSize, IB_ACCESS_LOCAL_WRITE);
    m_recvMr = hca->RegisterMemory(uint64_t(m_recvBuffers) * m_recvSlotSize, IB_ACCESS_LOCAL_WRITE);
    m_sendCq->SetCompletionCallback(MakeCallback(&IpoibNetDevice::SendDone, this));
    m_recvCq->SetCompletionCallback(MakeCallback(&IpoibNetDevice::RecvDone, this));
    m_freeSlots.clear();
    for (uint32_t i = m_sendBuffers; i-- > 0;)
    {
        m_freeSlots.push_back(i);
    }
    for (uint32_t i = 0; i < m_recvBuffers; ++i)
    {
        PostRecvSlot(i);
    }
    // Own GUID: the CA of this port in the SM's topology.
    const IbTopology& topo = sm->GetTopology();
    uint64_t guid = 0;
    for (uint32_t ca : topo.GetCas())
    {
        if (port < topo.GetNode(ca).ports.size() && sm->GetCaPort(ca, port) == m_port)
        {
            guid = topo.GetNode(ca).guid;
        }
    }
    NS_ABORT_MSG_IF(guid == 0,
                    "IpoibNetDevice::Setup: the port is not part of the subnet manager's fabric");
    NS_ABORT_MSG_IF(m_addressMode == EUI64 && ((guid >> 56) & 0x01) != 0,
                    "IpoibNetDevice::Setup: HardwareAddressMode=Eui64 needs a GUID with the "
                    "individual/group bit (0x01 of its first byte) clear, as IEEE-assigned "
                    "EUI-64s have it; GUID 0x"
                        << std::hex << guid << std::dec
                        << " would be a group address: give the CA another GUID or use "
                           "Ipoib20");
    m_address = IpoibAddress::FromGuid(m_qp->GetQpNum(), guid);
    if (m_groupQpn == 0)
    {
        m_groupQpn = m_qp->GetQpNum();
    }
    NS_LOG_INFO("IPoIB on node " << (m_node ? m_node->GetId() : 0) << ": " << m_address << " LID "
                                 << m_port->GetLid() << " MTU " << m_mtu);
}

void
IpoibNetDevice::SetBroadcastGroup(uint16_t mlid, uint32_t qpn)
{
    NS_LOG_FUNCTION(this << mlid << qpn);
    m_mlid = mlid;
    m_groupQpn = qpn;
}

Ptr<IbQueuePair>
IpoibNetDevice::GetQueuePair() const
{
    return m_qp;
}

Ptr<IbNetDevice>
IpoibNetDevice::GetIbPort() const
{
    return m_port;
}

Ptr<IbHca>
IpoibNetDevice::GetHca() const
{
    return m_hca;
}

IpoibAddress
IpoibNetDevice::GetIpoibAddress() const
{
    return m_address;
}

void
IpoibNetDevice::SetPresentInterfaceId(bool on)
{
    NS_LOG_FUNCTION(this << on);
    NS_ABORT_MSG_IF(on && !m_qp,
                    "IpoibNetDevice::SetPresentInterfaceId: call Setup() first (the interface "
                    "identifier comes from the port GUID)");
    m_presentInterfaceId = on;
}

uint64_t
IpoibNetDevice::GetInterfaceId() const
{
    // RFC 4391 section 8: the EUI-64 is the port GUID; the interface identifier inverts
    // its universal/local bit (RFC 4291 appendix A).
    return m_address.GetGuid() ^ kUniversalLocalBit;
}

IpoibNetDevice::AddressMode
IpoibNetDevice::GetAddressMode() const
{
    return m_addressMode;
}

void
IpoibNetDevice::SetAddressMode(AddressMode mode)
{
    NS_LOG_FUNCTION(this << mode);
    NS_ABORT_MSG_IF(m_qp && mode != m_addressMode,
                    "IpoibNetDevice: HardwareAddressMode cannot change after Setup() (the IP "
                    "stacks already hold the device's address): set it before, e.g. with "
                    "IpoibHelper::SetDeviceAttribute");
    m_addressMode = mode;
}

Mac64Address
IpoibNetDevice::InterfaceIdAddress(uint64_t guid)
{
    const uint64_t id = guid ^ kUniversalLocalBit;
    uint8_t b[8];
    for (uint32_t i = 0; i < 8; ++i)
    {
        b[i] = static_cast<uint8_t>(id >> (56 - 8 * i));
    }
    Mac64Address m;
    m.CopyFrom(b);
    return m;
}

uint64_t
IpoibNetDevice::GetUnresolvedDrops() const
{
    return m_unresolvedDrops;
}

uint64_t
IpoibNetDevice::GetTxQueueDrops() const
{
    return m_txQueueDrops;
}

const IpoibNetDevice::Route&
IpoibNetDevice::Resolve(uint64_t guid, uint32_t qpn)
{
    // Consecutive packets to one destination (a bulk flow) skip the hash lookup.
    if (m_lastRoute == nullptr || m_lastGuid != guid)
    {
        auto it = m_routes.find(guid);
        if (it == m_routes.end())
        {
            Route r;
            const IbTopology& topo = m_sm->GetTopology();
            const int32_t idx = topo.FindByGuid(guid);
            if (idx >= 0 && topo.GetNode(idx).type == IbTopology::CA)
            {
                Ptr<IbNetDevice> dstPort = m_sm->GetCaPort(idx, 1);
                if (dstPort)
                {
                    const IbPathRecord pr =
                        m_sm->GetPathRecord(m_port->GetLid(), dstPort->GetLid());
                    r.valid = pr.valid;
                    r.dlid = pr.dlid;
                    r.sl = pr.sl;
                    r.port = dstPort;
                    if (m_addressMode == EUI64)
                    {
                        CheckPeerQpn(dstPort, qpn);
                    }
                }
            }
            it = m_routes.emplace(guid, r).first;
        }
        m_lastGuid = guid;
        m_lastRoute = &it->second;
    }
    Route& r = *m_lastRoute;
    if (r.valid && r.fifoQpn != qpn)
    {
        r.fifoQpn = qpn;
        r.fifo = PeerFifo(r.port, qpn);
    }
    return r;
}

void
IpoibNetDevice::CheckPeerQpn(Ptr<IbNetDevice> dstPort, uint32_t qpn) const
{
    Ptr<Node> node = dstPort->GetNode();
    if (!node || !m_node || node->GetSystemId() != m_node->GetSystemId())
    {
        return; // another MPI rank: IpoibHelper gave its device the same QPN
    }
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<IpoibNetDevice> peer = DynamicCast<IpoibNetDevice>(node->GetDevice(i));
        if (peer && peer->m_qp && peer->m_port == dstPort)
        {
            NS_ABORT_MSG_IF(peer->m_qp->GetQpNum() != qpn,
                            "IpoibNetDevice (HardwareAddressMode=Eui64) on node "
                                << m_node->GetId() << " sends unicast packets to QPN " << qpn
                                << " (its broadcast group's QPN), but the IPoIB QP of node "
                                << node->GetId() << " has QPN " << peer->m_qp->GetQpNum()
                                << ": an Eui64 address carries no QPN, so every IPoIB device "
                                   "of the subnet needs the same QPN. Install them with one "
                                   "IpoibHelper::Install (which guarantees it) or call "
                                   "SetBroadcastGroup with their common QPN");
            return;
        }
    }
}

std::shared_ptr<IpoibNetDevice::SentFifo>
IpoibNetDevice::PeerFifo(Ptr<IbNetDevice> dstPort, uint32_t qpn) const
{
    Ptr<Node> node = dstPort->GetNode();
    // A node of another MPI rank receives there: no FIFO (its packets arrive as bytes).
    if (!node || !m_node || node->GetSystemId() != m_node->GetSystemId())
    {
        return nullptr;
    }
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<IpoibNetDevice> peer = DynamicCast<IpoibNetDevice>(node->GetDevice(i));
        if (peer && peer->m_qp && peer->m_port == dstPort && peer->m_qp->GetQpNum() == qpn)
        {
            return peer->SenderFifo(m_port->GetLid(), m_qp->GetQpNum());
        }
    }
    return nullptr;
}

IpoibNetDevice::LidEntry&
IpoibNetDevice::Lid(uint16_t lid)
{
    if (lid >= m_lids.size())
    {
        m_lids.resize(uint32_t(lid) + 1);
    }
    LidEntry& e = m_lids[lid];
    if (!e.guidKnown)
    {
        const IbRoutingProblem& prob = m_sm->GetRoutingProblem();
        if (lid < prob.lidOwner.size() && prob.lidOwner[lid].first >= 0)
        {
            e.guid = m_sm->GetTopology().GetNode(prob.lidOwner[lid].first).guid;
        }
        e.guidKnown = true;
    }
    return e;
}

std::shared_ptr<IpoibNetDevice::SentFifo>
IpoibNetDevice::SenderFifo(uint16_t slid, uint32_t srcQpn)
{
    LidEntry& e = Lid(slid);
    for (const auto& [qpn, fifo] : e.fifos)
    {
        if (qpn == srcQpn)
        {
            return fifo;
        }
    }
    e.fifos.emplace_back(srcQpn, std::make_shared<SentFifo>());
    return e.fifos.back().second;
}

Ptr<Packet>
IpoibNetDevice::TakeSent(LidEntry& from, uint32_t srcQpn, const uint8_t* data, uint32_t len)
{
    SentFifo* fifo = nullptr;
    for (const auto& [qpn, f] : from.fifos)
    {
        if (qpn == srcQpn)
        {
            fifo = f.get();
            break;
        }
    }
    if (!fifo)
    {
        return nullptr;
    }
    // In order: the front matches unless packets before this one were lost in the fabric
    // (then they are skipped and forgotten). The bytes are compared in full, so that the
    // packet handed up always has exactly the bytes that crossed the fabric.
    for (std::size_t i = 0; i < fifo->size(); ++i)
    {
        const Ptr<Packet>& p = (*fifo)[i];
        if (p->GetSize() != len)
        {
            continue;
        }
        p->CopyData(m_scratch.data(), len);
        if (std::memcmp(m_scratch.data(), data, len) == 0)
        {
            Ptr<Packet> found = p;
            fifo->erase(fifo->begin(), fifo->begin() + i + 1);
            return found;
        }
    }
    return nullptr;
}

bool
IpoibNetDevice::Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber)
{
    NS_LOG_FUNCTION(this << packet << dest << protocolNumber);
    // The destination: a group (the broadcast group), or a GUID and a QPN.
    bool group = false;
    uint64_t guid = 0;
    uint32_t qpn = 0;
    if (!m_qp)
    {
        m_macTxDropTrace(packet);
        return false;
    }
    if (m_addressMode == EUI64)
    {
        if (!IsEui64Address(dest))
        {
            NS_LOG_WARN("not an 8-byte (Eui64 mode) address: " << dest << ": dropped");
            m_macTxDropTrace(packet);
            return false;
        }
        // Not Mac64Address::ConvertFrom: an address that neighbour discovery learnt from a
        // link-layer address option is 14 bytes (the option's 16 bytes minus type and
        // length; untyped before ns-3 3.44, NdEui64Type after), and ConvertFrom would copy
        // all of them.
        uint8_t b[Address::MAX_SIZE];
        dest.CopyTo(b);
        group = (b[0] & 0x01) != 0; // the individual/group bit
        for (uint32_t i = 0; i < 8; ++i)
        {
            guid = (guid << 8) | b[i];
        }
        guid ^= kUniversalLocalBit;
        qpn = m_groupQpn;
    }
    else
    {
        if (!IpoibAddress::IsMatchingType(dest))
        {
            NS_LOG_WARN("not a 20-byte IPoIB address: " << dest << ": dropped");
            m_macTxDropTrace(packet);
            return false;
        }
        const IpoibAddress dst = IpoibAddress::ConvertFrom(dest);
        group = dst.IsMulticast();
        guid = dst.GetGuid();
        qpn = dst.GetQpn();
    }
    TxItem item;
    if (group)
    {
        item.dlid = m_mlid;
        item.sl = 0;
        item.qpn = m_groupQpn;
        NS_ABORT_MSG_IF(m_mlid == 0,
                        "IpoibNetDevice on node "
                            << GetNode()->GetId()
                            << ": a broadcast or multicast packet, but the device has no "
                               "broadcast group; install it with IpoibHelper, or call "
                               "SetBroadcastGroup(mlid, qpn) after creating the group");
    }
    else
    {
        const Route& r = Resolve(guid, qpn);
        if (!r.valid)
        {
            NS_LOG_WARN("cannot resolve " << dest << ": dropped");
            ++m_unresolvedDrops;
            m_macTxDropTrace(packet);
            return false;
        }
        item.dlid = r.dlid;
        item.sl = r.sl;
        item.qpn = qpn;
        item.fifo = r.fifo;
    }
    const IpoibHeader header(protocolNumber);
    if (packet->GetSize() + header.GetSerializedSize() > m_slotSize)
    {
        NS_LOG_WARN("packet of " << packet->GetSize() << " bytes exceeds the IB MTU: dropped");
        m_macTxDropTrace(packet);
        return false;
    }
    // The limit is on packets that wait: with a send buffer free (then nothing waits) the
    // packet is posted at once, whatever TxQueueSize.
    if (m_freeSlots.empty() && m_txQueue.size() >= m_txQueueSize)
    {
        ++m_txQueueDrops;
        m_macTxDropTrace(packet);
        return false;
    }
    m_macTxTrace(packet);
    packet->AddHeader(header);
    item.packet = packet;
    m_txQueue.push_back(item);
    TrySend();
    return true;
}

void
IpoibNetDevice::TrySend()
{
    while (!m_freeSlots.empty() && !m_txQueue.empty())
    {
        TxItem item = m_txQueue.front();
        m_txQueue.pop_front();
        const uint32_t slot = m_freeSlots.back();
        m_freeSlots.pop_back();
        const uint64_t addr = m_sendMr->GetAddr() + uint64_t(slot) * m_slotSize;
        const uint32_t size = item.packet->GetSize();
        uint8_t* buf = m_sendMr->GetPointer(addr);
        item.packet->CopyData(buf, size);
        IbSendWr wr;
        wr.wrId = slot;
        wr.opcode = IbWrOpcode::SEND;
        wr.sge.addr = addr;
        wr.sge.length = size;
        wr.sge.lkey = m_sendMr->GetLkey();
        wr.signaled = true;
        wr.udDlid = item.dlid;
        wr.udSl = item.sl;
        wr.udRemoteQpn = item.qpn;
        wr.udRemoteQkey = m_qkey;
        std::string err;
        if (!m_qp->PostSend(wr, &err))
        {
            // The destination cannot be reached from this port (the QP says why): counted
            // as an unresolved destination, traced without the IPoIB header as the other
            // drops are.
            NS_LOG_WARN("PostSend refused: " << err);
            m_freeSlots.push_back(slot);
            ++m_unresolvedDrops;
            Ptr<Packet> dropped = item.packet->Copy();
            IpoibHeader header;
            dropped->RemoveHeader(header);
            m_macTxDropTrace(dropped);
            continue;
        }
        if (item.fifo)
        {
            if (item.fifo->size() >= kMaxSentFifo)
            {
                item.fifo->pop_front();
            }
            item.fifo->push_back(item.packet);
        }
    }
}

void
IpoibNetDevice::SendDone(const IbWorkCompletion& wc)
{
    NS_LOG_FUNCTION(this << wc.wrId);
    if (wc.status != IbWcStatus::SUCCESS)
    {
        NS_LOG_WARN("send completion " << IbWcStatusName(wc.status));
    }
    m_freeSlots.push_back(static_cast<uint32_t>(wc.wrId));
    TrySend();
}

void
IpoibNetDevice::PostRecvSlot(uint32_t slot)
{
    IbRecvWr wr;
    wr.wrId = slot;
    wr.sge.addr = m_recvMr->GetAddr() + uint64_t(slot) * m_recvSlotSize;
    wr.sge.length = m_recvSlotSize;
    wr.sge.lkey = m_recvMr->GetLkey();
    std::string err;
    if (!m_qp->PostRecv(wr, &err))
    {
        NS_LOG_WARN("PostRecv refused: " << err);
    }
}

void
IpoibNetDevice::RecvDone(const IbWorkCompletion& wc)
{
    NS_LOG_FUNCTION(this << wc.wrId << wc.byteLen);
    const uint32_t slot = static_cast<uint32_t>(wc.wrId);
    if (wc.status != IbWcStatus::SUCCESS || wc.byteLen < kGrhBytes + IpoibHeader::SIZE)
    {
        if (wc.status != IbWcStatus::WR_FLUSH_ERR && m_qp)
        {
            PostRecvSlot(slot);
        }
        m_macRxDropTrace(Create<Packet>());
        return;
    }
    const uint64_t addr = m_recvMr->GetAddr() + uint64_t(slot) * m_recvSlotSize + kGrhBytes;
    const uint32_t len = wc.byteLen - kGrhBytes;
    const uint8_t* data = m_recvMr->GetPointer(addr);
    LidEntry& src = Lid(wc.slid);
    Ptr<Packet> orig = TakeSent(src, wc.srcQp, data, len);
    Ptr<Packet> p = orig ? orig->Copy() : Create<Packet>(data, len);
    PostRecvSlot(slot);
    IpoibHeader h;
    p->RemoveHeader(h);
    const Address from = m_addressMode == EUI64
                             ? Address(InterfaceIdAddress(src.guid))
                             : Address(IpoibAddress::FromGuid(wc.srcQp, src.guid));
    m_macRxTrace(p);
    if (!m_promiscCallback.IsNull())
    {
        m_promiscCallback(this, p, h.GetEtherType(), from, GetAddress(), PACKET_HOST);
    }
    if (!m_rxCallback.IsNull())
    {
        m_rxCallback(this, p, h.GetEtherType(), from);
    }
}

void
IpoibNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
IpoibNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
IpoibNetDevice::GetChannel() const
{
    // A virtual interface over the HCA (like Linux ib0): no channel of its own. (Global
    // routing then treats the IPoIB subnet as a stub network of each host.)
    return nullptr;
}

void
IpoibNetDevice::SetAddress(Address address)
{
    if (m_addressMode == EUI64 && Mac64Address::IsMatchingType(address))
    {
        uint8_t b[Address::MAX_SIZE];
        address.CopyTo(b);
        uint64_t id = 0;
        for (uint32_t i = 0; i < 8; ++i)
        {
            id = (id << 8) | b[i];
        }
        m_address = IpoibAddress::FromGuid(m_address.GetQpn(), id ^ kUniversalLocalBit);
        return;
    }
    NS_ABORT_MSG_UNLESS(IpoibAddress::IsMatchingType(address),
                        "IpoibNetDevice::SetAddress: "
                            << address
                            << " is neither a 20-byte IpoibAddress nor (HardwareAddressMode="
                               "Eui64) a Mac64Address");
    m_address = IpoibAddress::ConvertFrom(address);
}

Address
IpoibNetDevice::GetAddress() const
{
    if (m_presentInterfaceId || m_addressMode == EUI64)
    {
        return InterfaceIdAddress(m_address.GetGuid());
    }
    return m_address;
}

bool
IpoibNetDevice::SetMtu(const uint16_t mtu)
{
    if (m_slotSize != 0 && (mtu == 0 || mtu + IpoibHeader::SIZE > m_slotSize))
    {
        return false;
    }
    m_mtu = mtu;
    return true;
}

void
IpoibNetDevice::SetMtuAttribute(uint16_t mtu)
{
    NS_ABORT_MSG_UNLESS(SetMtu(mtu),
                        "IpoibNetDevice attribute Mtu=" << mtu << " on node "
                                                        << (GetNode() ? GetNode()->GetId() : 0)
                                                        << ": use 1 to the IB MTU minus 4 ("
                                                        << m_slotSize - IpoibHeader::SIZE << ")");
}

uint16_t
IpoibNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
IpoibNetDevice::IsLinkUp() const
{
    return m_port && m_port->IsLinkUp();
}

void
IpoibNetDevice::AddLinkChangeCallback(Callback<void> callback)
{
    m_linkChangeCallbacks.ConnectWithoutContext(callback);
}

void
IpoibNetDevice::PortLinkChanged()
{
    if (!m_port)
    {
        return; // disposed of
    }
    if (!m_portCameUp && m_port->IsLinkUp())
    {
        m_portCameUp = true;
        return;
    }
    m_linkChangeCallbacks();
}

bool
IpoibNetDevice::IsBroadcast() const
{
    return true;
}

Address
IpoibNetDevice::GetBroadcast() const
{
    if (m_addressMode == EUI64)
    {
        // Any address with the individual/group bit set maps to the broadcast group.
        static const Mac64Address broadcast("ff:ff:ff:ff:ff:ff:ff:ff");
        return broadcast;
    }
    return IpoibAddress::GetBroadcast(m_pkey);
}

bool
IpoibNetDevice::IsMulticast() const
{
    return true;
}

Address
IpoibNetDevice::GetMulticast(Ipv4Address multicastGroup) const
{
    // Every group uses the broadcast group (see the class description).
    return GetBroadcast();
}

Address
IpoibNetDevice::GetMulticast(Ipv6Address addr) const
{
    return GetBroadcast();
}

bool
IpoibNetDevice::IsPointToPoint() const
{
    return false;
}

bool
IpoibNetDevice::IsBridge() const
{
    return false;
}

bool
IpoibNetDevice::SendFrom(Ptr<Packet> packet,
                         const Address& source,
                         const Address& dest,
                         uint16_t protocolNumber)
{
    NS_LOG_WARN("IpoibNetDevice does not support SendFrom");
    m_macTxDropTrace(packet);
    return false;
}

Ptr<Node>
IpoibNetDevice::GetNode() const
{
    return m_node;
}

void
IpoibNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
IpoibNetDevice::NeedsArp() const
{
    return true;
}

void
IpoibNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback cb)
{
    m_rxCallback = cb;
}

void
IpoibNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback cb)
{
    m_promiscCallback = cb;
}

bool
IpoibNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
