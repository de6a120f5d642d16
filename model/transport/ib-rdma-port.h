/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RDMA_PORT_H
#define IB_RDMA_PORT_H

#include "rdma-port.h"

#include "ns3/ib-net-device.h"

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief The InfiniBand link layer of an HCA port: LRH-addressed packets (LIDs, SL-to-VL,
 * ICRC and VCRC) on an IbNetDevice.
 */
class IbRdmaPort : public RdmaPort
{
  public:
    /// @param dev the port's device (kept by the HCA as long as this object)
    explicit IbRdmaPort(Ptr<IbNetDevice> dev);

    /// @return the device
    IbNetDevice* GetIbDevice() const
    {
        return m_dev;
    }

    bool IsRoce() const override;
    Ptr<NetDevice> GetDevice() const override;
    DataRate GetDataRate() const override;
    uint32_t GetWireOverhead() const override;
    uint32_t GetActiveMtu() const override;
    uint32_t GetLocalAddress() const override;
    std::string SlProblem(uint8_t sl) const override;
    uint8_t GetClassForSl(uint8_t sl) const override;
    std::string FirstHopProblem(uint32_t remote) const override;
    std::string AddressText(uint32_t remote) const override;
    uint32_t GetTxQueueLength(uint8_t cls) const override;
    void Send(Ptr<Packet> p, uint8_t cls) override;
    void Seal(Ptr<Packet> p,
              uint32_t remote,
              uint8_t sl,
              uint16_t entropy,
              const IbBthHeader& bth,
              uint32_t zeroTail) override;
    uint32_t GetBthOffset() const override;
    const IbCaCongestionSetting* GetCongestionSetting() const override;
    bool IsAdaptiveRouting() const override;
    /**
     * Build the congestion notification packet (IBA annex A10) that answers a FECN.
     * @param remote the LID of the packet's source
     * @param destQp the source's QP
     * @param sl the SL to send it on (that of the marked packet)
     * @return the CNP, sealed
     */
    Ptr<Packet> MakeCnp(uint32_t remote, uint32_t destQp, uint8_t sl) const;
    uint32_t GetTrailerSize() const override;

  private:
    Ptr<IbNetDevice> m_keep; //!< keeps the device alive
    IbNetDevice* m_dev;      //!< the device, for the per-packet calls
};

} // namespace ns3

#endif /* IB_RDMA_PORT_H */
