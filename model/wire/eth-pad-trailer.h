/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ETH_PAD_TRAILER_H
#define ETH_PAD_TRAILER_H

#include "ns3/trailer.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The zero bytes that pad a short Ethernet frame to 60 bytes before its FCS.
 *
 * A Trailer rather than Packet::AddPaddingAtEnd because the latter leaves the new bytes
 * uninitialised, and the padding is covered by the FCS, so it must really be zero.
 */
class EthPadTrailer : public Trailer
{
  public:
    /// Most pad bytes: a frame with an empty body.
    static constexpr uint32_t MAX_BYTES = 46;

    /**
     * @param bytes pad bytes, 0..MAX_BYTES
     */
    explicit EthPadTrailer(uint8_t bytes = 0);
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    /**
     * @param end the end of the buffer
     * @return the pad size set beforehand, or 0 if fewer bytes are present
     */
    uint32_t Deserialize(Buffer::Iterator end) override;
    /**
     * Read a pad whose extent is known (Packet::Print): its size is the extent's.
     * @param start the first pad byte
     * @param end just past the last
     * @return the pad size
     */
    uint32_t Deserialize(Buffer::Iterator start, Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

  private:
    uint8_t m_bytes; //!< pad bytes
};

} // namespace ns3

#endif /* ETH_PAD_TRAILER_H */
