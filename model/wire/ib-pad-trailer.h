/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PAD_TRAILER_H
#define IB_PAD_TRAILER_H

#include "ns3/trailer.h"

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The 0 to 3 zero bytes that pad an IBA payload to a multiple of 4 bytes.
 *
 * A Trailer rather than Packet::AddPaddingAtEnd because the latter leaves the new bytes
 * uninitialised, and the pad is covered by the ICRC and VCRC, so it must really be zero.
 */
class IbPadTrailer : public Trailer
{
  public:
    /**
     * @param bytes pad bytes, 0..3
     */
    explicit IbPadTrailer(uint8_t bytes = 0);
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

#endif /* IB_PAD_TRAILER_H */
