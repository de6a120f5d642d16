/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef PCIE_LINK_H
#define PCIE_LINK_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-host
 * @brief The PCI Express link between a host's root complex and an adapter: its rate per
 * direction and what each DMA transfer costs on it.
 *
 * A link of Lanes lanes at generation g carries per direction Lanes x the generation's
 * transfer rate (2.5, 5, 8, 16, 32 GT/s) times its line-code efficiency (8b/10b for
 * generations 1 and 2, 128b/130b from 3 on). Transaction-layer packets (TLPs) carry the
 * data: each costs 8 bytes of framing, sequence number and LCRC on top of its header (3
 * dwords for a completion, 4 for a request with a 64-bit address) and payload. So:
 * - a DMA read (the adapter fetching host memory: WQEs, payload to send, READ data) asks
 *   with one 24-byte memory-read request per MaxReadRequestSize bytes, upstream, and the
 *   data comes back downstream in completions of ReadCompletionSize bytes, 20 bytes of
 *   overhead each;
 * - a DMA write (the adapter writing received data or a CQE) goes upstream in posted
 *   memory writes of MaxPayloadSize bytes, 24 bytes of overhead each.
 *
 * Latencies are separate attributes, from the adapter's point of view: ReadLatency from
 * a read request to its first completion, WriteLatency from a posted write to the data
 * being visible to the CPU, MmioLatency from a CPU store to a device register (the
 * doorbell) reaching the adapter.
 *
 * Not counted: data-link packets (ACK/NAK and flow-control updates, 8 bytes each, in the
 * direction opposite the TLPs they answer), SKP ordered sets, the root complex's own
 * limits (outstanding reads, IOMMU translation), and generation 6's FLIT mode.
 */
class PcieLink : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    PcieLink();
    ~PcieLink() override;

    /// Bytes of a TLP besides header and payload: framing, sequence number, LCRC.
    static constexpr uint32_t TLP_FRAMING = 8;
    /// Header of a completion with data (3 dwords).
    static constexpr uint32_t CPL_HEADER = 12;
    /// Header of a memory read or write request with a 64-bit address (4 dwords).
    static constexpr uint32_t REQ_HEADER = 16;

    /// @return bytes per second one direction carries (lanes, rate, line code)
    double GetDirectionRate() const;
    /**
     * @param bytes payload read from host memory
     * @return bytes on the downstream direction for it (completions with their overhead)
     */
    uint64_t ReadCompletionBytes(uint64_t bytes) const;
    /**
     * @param bytes payload read from host memory
     * @return bytes on the upstream direction for it (the read requests)
     */
    uint64_t ReadRequestBytes(uint64_t bytes) const;
    /**
     * @param bytes payload written to host memory
     * @return bytes on the upstream direction for it (posted writes with their overhead)
     */
    uint64_t WriteBytes(uint64_t bytes) const;
    /**
     * @param linkBytes bytes on one direction
     * @return the time they take on it, in (fractional) time steps of the simulator's
     *         resolution, so that a sum of transfers rounds only once
     */
    double TransferSteps(uint64_t linkBytes) const;
    /**
     * @param linkBytes bytes on one direction
     * @return the time they take on it, rounded up to a time step
     */
    Time TransferTime(uint64_t linkBytes) const;
    /// @return payload bytes per second a long DMA read delivers (downstream ceiling)
    double GetReadCeiling() const;
    /// @return payload bytes per second long DMA writes deliver (upstream ceiling)
    double GetWriteCeiling() const;
    /// @return the ReadLatency attribute
    Time GetReadLatency() const;
    /// @return the WriteLatency attribute
    Time GetWriteLatency() const;
    /// @return the MmioLatency attribute
    Time GetMmioLatency() const;
    /// @return e.g. "PCIe Gen4 x16, MPS 256, MRRS 4096, read completions 256 B"
    std::string Describe() const;

  private:
    /// Check the sizes the checkers cannot (powers of two, completion <= MPS); abort naming
    /// the attribute otherwise.
    void Validate() const;

    uint32_t m_generation;            //!< 1 to 5
    uint32_t m_lanes;                 //!< 1, 2, 4, 8, 12, 16 or 32
    uint32_t m_mps;                   //!< Max_Payload_Size
    uint32_t m_mrrs;                  //!< Max_Read_Request_Size
    uint32_t m_readCompletion;        //!< bytes of data per read completion
    Time m_readLatency;               //!< read request to first completion
    Time m_writeLatency;              //!< posted write to data visible
    Time m_mmioLatency;               //!< CPU store to device register
    mutable double m_rate{0};         //!< GetDirectionRate(), once checked
    mutable double m_stepsPerByte{0}; //!< time steps per byte on one direction
};

} // namespace ns3

#endif /* PCIE_LINK_H */
