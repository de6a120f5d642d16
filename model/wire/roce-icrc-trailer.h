/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef ROCE_ICRC_TRAILER_H
#define ROCE_ICRC_TRAILER_H

#include "ns3/trailer.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief The 4-byte ICRC that ends a RoCEv2 packet (inside the UDP payload, before the
 * Ethernet FCS), least significant byte first as in IBA.
 *
 * IbCrcTrailer carries an ICRC and a VCRC; RoCEv2 has no VCRC (the FCS protects the frame),
 * hence this trailer of its own. RocePacket computes the value.
 */
class RoceIcrcTrailer : public Trailer
{
  public:
    /// Size of the ICRC in bytes.
    static constexpr uint32_t SIZE = 4;

    /**
     * @param icrc the ICRC value
     */
    explicit RoceIcrcTrailer(uint32_t icrc = 0);
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator end) const override;
    uint32_t Deserialize(Buffer::Iterator end) override;
    void Print(std::ostream& os) const override;

    /// @param icrc the ICRC value
    void SetIcrc(uint32_t icrc);
    /// @return the ICRC value
    uint32_t GetIcrc() const;

  private:
    uint32_t m_icrc; //!< Invariant CRC
};

} // namespace ns3

#endif /* ROCE_ICRC_TRAILER_H */
