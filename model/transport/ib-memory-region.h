/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_MEMORY_REGION_H
#define IB_MEMORY_REGION_H

#include "ib-verbs.h"

#include "ns3/object.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief A registered memory region (ibv_mr): a range of host virtual addresses with a
 * local key, a remote key and access rights, created by IbHca::RegisterMemory.
 *
 * In data mode (IbHca attribute DataMode) the region owns real backing bytes
 * (GetData()), which the transport reads when it sends and writes when it receives.
 * Otherwise payloads are virtual and the region holds no memory, except for the 64-bit
 * words that atomic operations touch: those are kept in a small map, so atomics return
 * correct values in both modes. Each region owns its bytes: two registrations of
 * overlapping addresses do not share memory.
 */
class IbMemoryRegion : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbMemoryRegion();
    ~IbMemoryRegion() override;

    /**
     * @brief Set the region up (called by IbHca::RegisterMemory).
     * @param addr first virtual address
     * @param length bytes
     * @param key local and remote key
     * @param access IbAccess flags
     * @param dataMode allocate backing bytes (zero-filled)
     */
    void Setup(uint64_t addr, uint64_t length, uint32_t key, uint32_t access, bool dataMode);

    /// @return the first virtual address
    uint64_t GetAddr() const;
    /// @return the length in bytes
    uint64_t GetLength() const;
    /// @return the local key (used in SGEs)
    uint32_t GetLkey() const;
    /// @return the remote key (used by peers in RDMA and atomic requests)
    uint32_t GetRkey() const;
    /**
     * A signaled RDMA WRITE work request of @p length bytes from the start of this region to
     * the start of @p remote (a peer's region registered with IB_ACCESS_REMOTE_WRITE), to
     * post with IbQueuePair::PostSend.
     * @param remote the destination region
     * @param length bytes to write (at most both regions' lengths, checked when posted)
     * @param wrId the id its completion carries
     * @return the work request
     */
    IbSendWr WriteTo(const IbMemoryRegion& remote, uint32_t length, uint64_t wrId = 0) const;
    /// @return the IbAccess flags
    uint32_t GetAccess() const;
    /// @return the backing bytes in data mode (GetLength() of them), nullptr otherwise
    uint8_t* GetData();
    /// @return the backing bytes in data mode, nullptr otherwise
    const uint8_t* GetData() const;
    /**
     * @param addr a virtual address inside the region
     * @return the byte backing it in data mode, nullptr otherwise
     */
    uint8_t* GetPointer(uint64_t addr);

    /**
     * @param addr first address
     * @param length bytes
     * @return true if [addr, addr + length) lies inside the region (always for length 0
     *         at an address inside or just past the region)
     */
    bool Contains(uint64_t addr, uint64_t length) const;
    /**
     * @param flags IbAccess flags
     * @return true if the region grants all of them
     */
    bool HasAccess(uint32_t flags) const;
    /**
     * Local access check for an SGE.
     * @param addr first address
     * @param length bytes
     * @param lkey the SGE's key
     * @param needWrite the HCA writes into the SGE (receive, READ or atomic destination)
     * @return true if the key matches, the range is inside and the rights suffice
     */
    bool CheckLocal(uint64_t addr, uint64_t length, uint32_t lkey, bool needWrite) const;
    /**
     * Remote access check for an RDMA or atomic request.
     * @param addr first address
     * @param length bytes
     * @param rkey the request's key
     * @param flags the IbAccess right the operation needs
     * @return true if the key matches, the range is inside and the right is granted
     */
    bool CheckRemote(uint64_t addr, uint64_t length, uint32_t rkey, uint32_t flags) const;

    /**
     * Read a 64-bit word in host (little-endian) byte order, as an atomic operation does.
     * @param addr its address (inside the region)
     * @return the value (0 for a word never written in virtual mode)
     */
    uint64_t ReadU64(uint64_t addr) const;
    /**
     * Write a 64-bit word in host (little-endian) byte order.
     * @param addr its address (inside the region)
     * @param value the value
     */
    void WriteU64(uint64_t addr, uint64_t value);

  protected:
    void DoDispose() override;

  private:
    uint64_t m_addr;                                //!< first virtual address
    uint64_t m_length;                              //!< bytes
    uint32_t m_key;                                 //!< lkey == rkey
    uint32_t m_access;                              //!< IbAccess flags
    bool m_dataMode;                                //!< real bytes
    std::vector<uint8_t> m_data;                    //!< backing bytes (data mode)
    std::unordered_map<uint64_t, uint64_t> m_words; //!< words touched (virtual mode)
};

} // namespace ns3

#endif /* IB_MEMORY_REGION_H */
