/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RWH_HEADER_H
#define IB_RWH_HEADER_H

#include "ns3/header.h"

namespace ns3
{

/**
 * @ingroup infiniband-wire
 * @brief Raw Header (RWH) of an IBA raw datagram (LRH LNH = 0).
 *
 * 4 bytes: 16 reserved bits, then the 16-bit EtherType of the payload. A raw datagram is
 * LRH | RWH | payload | VCRC: it has no BTH and no ICRC. IbNetDevice::Send() uses it to
 * carry packets of ns-3 protocols (EtherType) directly over an IB link.
 */
class IbRwhHeader : public Header
{
  public:
    IbRwhHeader();
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
     * @return 4, or 0 if fewer than 4 bytes remain
     */
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// @param etherType the EtherType of the payload
    void SetEtherType(uint16_t etherType);
    /// @return the EtherType of the payload
    uint16_t GetEtherType() const;

  private:
    uint16_t m_etherType; //!< EtherType
};

} // namespace ns3

#endif /* IB_RWH_HEADER_H */
