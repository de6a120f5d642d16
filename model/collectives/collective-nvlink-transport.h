/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_NVLINK_TRANSPORT_H
#define COLLECTIVE_NVLINK_TRANSPORT_H

#include "collective-transport.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief The ranks of a communicator as GPUs of servers: messages between GPUs of one
 * server cross the server's NVLink/NVSwitch domain, the others the fabric transport
 * (CollectiveIbTransport over InfiniBand or RoCE, CollectiveTcpTransport), which gives
 * every GPU its own NIC.
 *
 * Rank r is GPU r % GpusPerServer of server r / GpusPerServer, or on the server
 * SetFabricTransport gives it (a communicator over some GPUs of each server, such as a
 * data-parallel group with one GPU per server). Each GPU has one NVLink
 * port to the NVSwitch, NvlinkBandwidth in each direction, and the NVSwitch is
 * non-blocking: a message of b bytes from GPU a to GPU c occupies a's egress for
 * b / NvlinkBandwidth once a's earlier messages have left, and c's ingress for as long,
 * not before it has left a's egress nor before c's earlier arrivals are in (cut-through:
 * the two serialisations overlap); it is delivered NvlinkLatency after the later of the
 * two ends. So one message takes b / B + L, k messages into one GPU take k b / B, and
 * distinct pairs do not disturb one another. Messages of one pair arrive in order; the
 * send completes (the sent callback) when it has left the egress.
 */
class CollectiveNvlinkTransport : public CollectiveTransport
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveNvlinkTransport();
    ~CollectiveNvlinkTransport() override;

    /**
     * Carry the messages between servers over @p fabric (its ranks are this transport's
     * ranks); its receive callback becomes this transport's.
     * @param fabric the fabric transport, set up for all ranks
     * @param servers per rank, its server (any numbering); empty: GpusPerServer
     *        consecutive ranks per server, which must then be whole servers
     */
    void SetFabricTransport(Ptr<CollectiveTransport> fabric, std::vector<uint32_t> servers = {});
    /// @return the fabric transport
    Ptr<CollectiveTransport> GetFabricTransport() const;

    uint32_t GetNRanks() const override;
    bool IsDataMode() const override;
    void Send(uint32_t src,
              uint32_t dst,
              uint32_t tag,
              uint64_t bytes,
              const uint8_t* data,
              Callback<void> sent) override;

    /// @return GPUs per server
    uint32_t GetGpusPerServer() const;
    /**
     * @param rank a rank
     * @return its server
     */
    uint32_t GetServer(uint32_t rank) const;
    /// @return messages sent over NVLink so far
    uint64_t GetNvlinkMessages() const;
    /// @return bytes sent over NVLink so far
    uint64_t GetNvlinkBytes() const;

  protected:
    void DoDispose() override;

  private:
    /**
     * An NVLink message has arrived.
     * @param src sender
     * @param dst receiver
     * @param tag tag
     * @param bytes length
     * @param data its bytes (data mode) or empty
     */
    void Arrived(uint32_t src,
                 uint32_t dst,
                 uint32_t tag,
                 uint64_t bytes,
                 std::vector<uint8_t> data);
    /**
     * A message arrived over the fabric.
     * @param src sender
     * @param dst receiver
     * @param tag tag
     * @param bytes length
     * @param data bytes or null
     */
    void FromFabric(uint32_t src, uint32_t dst, uint32_t tag, uint64_t bytes, const uint8_t* data);

    uint32_t m_gpusPerServer;          //!< GpusPerServer attribute
    DataRate m_bandwidth;              //!< NvlinkBandwidth attribute
    Time m_latency;                    //!< NvlinkLatency attribute
    Ptr<CollectiveTransport> m_fabric; //!< between servers
    std::vector<uint32_t> m_server;    //!< per rank: its server
    std::vector<Time> m_egressFree;    //!< per rank: its NVLink egress is free from
    std::vector<Time> m_ingressFree;   //!< per rank: its NVLink ingress is free from
    uint64_t m_nvlinkMessages{0};      //!< messages over NVLink
    uint64_t m_nvlinkBytes{0};         //!< their bytes
};

} // namespace ns3

#endif /* COLLECTIVE_NVLINK_TRANSPORT_H */
