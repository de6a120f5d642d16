/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-packet.h"

#include "ib-crc-trailer.h"
#include "ib-crc.h"
#include "ib-header-view.h"
#include "ib-pad-trailer.h"
#include "ib-rwh-header.h"

#include "ns3/assert.h"
#include "ns3/log.h"

#include <vector>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbPacket");

namespace
{

/// Bytes kept on the stack when copying the real (non-virtual) part of a packet.
constexpr uint32_t kStackBytes = 512;

/**
 * Copy the first @p len bytes of @p p to a buffer: the stack one if it fits.
 * @param p the packet
 * @param len bytes to copy
 * @param stack a kStackBytes buffer
 * @param heap storage used when it does not fit
 * @return the buffer holding the bytes
 */
const uint8_t*
CopyFront(Ptr<const Packet> p, uint32_t len, uint8_t* stack, std::vector<uint8_t>& heap)
{
    uint8_t* buf = stack;
    if (len > kStackBytes)
    {
        heap.resize(len);
        buf = heap.data();
    }
    p->CopyData(buf, len);
    return buf;
}

} // namespace

uint32_t
IbPacket::PadFor(uint32_t payloadBytes)
{
    return (4 - (payloadBytes & 3)) & 3;
}

uint32_t
IbPacket::WireSize(uint32_t payloadBytes, uint32_t extBytes, bool global)
{
    return LRH_SIZE + (global ? GRH_SIZE : 0) + BTH_SIZE + extBytes + payloadBytes +
           PadFor(payloadBytes) + CRC_SIZE;
}

void
IbPacket::Seal(Ptr<Packet> p,
               IbLrhHeader lrh,
               const IbGrhHeader* grh,
               IbBthHeader bth,
               uint32_t zeroTailBytes)
{
    NS_ASSERT_MSG(zeroTailBytes <= p->GetSize(),
                  "zeroTailBytes " << zeroTailBytes << " exceeds the packet size " << p->GetSize());
    // Extension headers are multiples of 4 bytes, so the pad depends on the payload only.
    const uint32_t pad = PadFor(p->GetSize());
    if (pad != 0)
    {
        p->AddTrailer(IbPadTrailer(static_cast<uint8_t>(pad)));
    }
    bth.SetPadCnt(static_cast<uint8_t>(pad));
    p->AddHeader(bth);
    if (grh != nullptr)
    {
        IbGrhHeader g = *grh;
        g.SetPayLen(static_cast<uint16_t>(p->GetSize() + 4)); // BTH through ICRC
        p->AddHeader(g);
        lrh.SetLnh(IbLrhHeader::LNH_IBA_GLOBAL);
    }
    else
    {
        lrh.SetLnh(IbLrhHeader::LNH_IBA_LOCAL);
    }
    // PktLen: LRH through ICRC, in 4-byte words.
    lrh.SetPktLen(static_cast<uint16_t>((LRH_SIZE + p->GetSize() + 4) / 4));
    p->AddHeader(lrh);

    const uint32_t zeros = zeroTailBytes + pad;
    const uint32_t realLen = p->GetSize() - zeros;
    uint8_t stack[kStackBytes];
    std::vector<uint8_t> heap;
    const uint8_t* bytes = CopyFront(p, realLen, stack, heap);
    IbCrcTrailer trailer;
    const uint32_t icrc = IbCrc::ComputeIcrcZeroTail(bytes, realLen, zeros);
    trailer.SetIcrc(icrc);
    trailer.SetVcrc(IbCrc::ComputeVcrcZeroTail(bytes, realLen, zeros, icrc));
    p->AddTrailer(trailer);
}

void
IbPacket::SealRaw(Ptr<Packet> p, IbLrhHeader lrh, uint16_t etherType)
{
    const uint32_t pad = PadFor(p->GetSize());
    if (pad != 0)
    {
        p->AddTrailer(IbPadTrailer(static_cast<uint8_t>(pad)));
    }
    IbRwhHeader rwh;
    rwh.SetEtherType(etherType);
    p->AddHeader(rwh);
    lrh.SetLnh(IbLrhHeader::LNH_RAW);
    lrh.SetPktLen(static_cast<uint16_t>((LRH_SIZE + p->GetSize()) / 4));
    p->AddHeader(lrh);
    uint8_t stack[kStackBytes];
    std::vector<uint8_t> heap;
    const uint8_t* bytes = CopyFront(p, p->GetSize(), stack, heap);
    IbCrcTrailer trailer;
    trailer.SetHasIcrc(false);
    trailer.SetVcrc(IbCrc::ComputeVcrc(bytes, p->GetSize()));
    p->AddTrailer(trailer);
}

IbLrhHeader
IbPacket::PeekLrh(Ptr<const Packet> p)
{
    IbLrhHeader lrh;
    p->PeekHeader(lrh);
    return lrh;
}

uint32_t
IbPacket::PeekHead(const Packet& p)
{
    uint8_t b[4];
    NS_ASSERT(p.GetSize() >= 4);
    p.CopyData(b, 4);
    return IbHeaderView::ReadBe32(b);
}

void
IbPacket::SetVl(Ptr<Packet> p, uint8_t vl)
{
    IbLrhHeader lrh;
    p->RemoveHeader(lrh);
    if (lrh.GetVl() == vl)
    {
        p->AddHeader(lrh);
        return;
    }
    const uint8_t oldByte0 = static_cast<uint8_t>((lrh.GetVl() << 4) | lrh.GetLinkVersion());
    lrh.SetVl(vl);
    const uint8_t newByte0 = static_cast<uint8_t>((vl << 4) | lrh.GetLinkVersion());
    IbCrcTrailer trailer;
    trailer.SetHasIcrc(lrh.GetLnh() >= IbLrhHeader::LNH_IBA_LOCAL);
    p->RemoveTrailer(trailer);
    trailer.SetVcrc(IbCrc::UpdateVcrcForFirstByte(trailer.GetVcrc(),
                                                  oldByte0,
                                                  newByte0,
                                                  static_cast<uint32_t>(lrh.GetPktLen()) * 4));
    p->AddHeader(lrh);
    p->AddTrailer(trailer);
}

bool
IbPacket::SetFecn(Ptr<Packet> p, uint32_t head)
{
    const uint8_t lnh = LnhOfHead(head);
    if (lnh < IbLrhHeader::LNH_IBA_LOCAL)
    {
        return false;
    }
    const bool global = lnh == IbLrhHeader::LNH_IBA_GLOBAL;
    IbLrhHeader lrh;
    IbGrhHeader grh;
    IbBthHeader bth;
    p->RemoveHeader(lrh);
    if (global)
    {
        p->RemoveHeader(grh);
    }
    p->RemoveHeader(bth);
    const bool was = bth.GetFecn();
    // BTH byte 4: FECN (bit 7), BECN (bit 6), six reserved bits (zero).
    const uint8_t oldByte = bth.GetBecn() ? 0x40 : 0x00;
    bth.SetFecn(true);
    p->AddHeader(bth);
    if (global)
    {
        p->AddHeader(grh);
    }
    p->AddHeader(lrh);
    if (was)
    {
        return false;
    }
    IbCrcTrailer trailer;
    trailer.SetHasIcrc(true);
    p->RemoveTrailer(trailer);
    const uint32_t offset = LRH_SIZE + (global ? GRH_SIZE : 0) + 4;
    trailer.SetVcrc(IbCrc::UpdateVcrcForByte(trailer.GetVcrc(),
                                             offset,
                                             oldByte,
                                             oldByte | 0x80,
                                             static_cast<uint32_t>(lrh.GetPktLen()) * 4));
    p->AddTrailer(trailer);
    return true;
}

} // namespace ns3
