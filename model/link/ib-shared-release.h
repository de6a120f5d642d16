/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_SHARED_RELEASE_H
#define IB_SHARED_RELEASE_H

#include <cstdint>

namespace ns3
{

class IbNetDevice;

/**
 * @ingroup infiniband-link
 * @brief The input buffer of a packet a switch sends out of several ports (multicast).
 *
 * The buffer is released when the last copy has left, so that the slowest member's output
 * pushes back on the source: the packet's buffer space stays taken until then. IbSwitch
 * keeps the records (a free list); IbNetDevice::TransmitComplete counts the copies down.
 */
struct IbSharedRelease
{
    IbNetDevice* port{nullptr};          ///< the input port whose buffer holds the packet
    uint32_t blocks{0};                  ///< the packet's blocks
    uint32_t remaining{0};               ///< copies still to leave
    uint8_t vl{0};                       ///< the input buffer's VL
    IbSharedRelease* nextFree{nullptr};  ///< the owner's free list
    IbSharedRelease** freeHead{nullptr}; ///< the owner's free-list head

    /// Give the record back to its owner's free list (its copies have all left).
    void Recycle()
    {
        port = nullptr;
        nextFree = *freeHead;
        *freeHead = this;
    }
};

} // namespace ns3

#endif /* IB_SHARED_RELEASE_H */
