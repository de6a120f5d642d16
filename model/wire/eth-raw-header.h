/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_RAW_HEADER_H
#define ETH_RAW_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The leading bytes of a frame (up to MAX_BYTES), carried as bytes.
 *
 * ns-3's packets cannot be written in place: a field is changed by removing the header that
 * holds it and adding it back. A switch that rewrites the MAC addresses and the TTL of every
 * frame it forwards (EthFrame::RewriteHop) would pay for EthernetHeader and Ipv4Header
 * (their parsing and the IPv4 checksum) on every hop; this header removes and restores the
 * same bytes without interpreting them, and the caller edits them directly.
 *
 * It records itself in the packet's metadata under its own type, so EthFrame uses it only on
 * packets that carry no metadata (Packet::EnablePrinting() not called, ns-3's default); on
 * the others it keeps ns-3's own headers, so that Packet::Print() stays right.
 */
class EthRawHeader : public Header
{
  public:
    /// Most bytes held.
    static constexpr uint32_t MAX_BYTES = 64;

    /**
     * @param size bytes to hold (0..MAX_BYTES); Deserialize() reads this many
     */
    explicit EthRawHeader(uint32_t size = 0);

    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    /**
     * @param start where to read
     * @return the size set at construction, or 0 if fewer bytes remain
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// @return the bytes (GetSerializedSize() of them), to read or change
    uint8_t* Data()
    {
        return m_bytes;
    }

    /// @return the bytes
    const uint8_t* Data() const
    {
        return m_bytes;
    }

  private:
    uint32_t m_size;            //!< bytes held
    uint8_t m_bytes[MAX_BYTES]; //!< the bytes
};

} // namespace ns3

#endif /* ETH_RAW_HEADER_H */
