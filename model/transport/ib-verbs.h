/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_VERBS_H
#define IB_VERBS_H

#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief Types of the verbs-like API of the RDMA transport (IbHca, IbQueuePair,
 * IbCompletionQueue, IbMemoryRegion), close to libibverbs in spirit: work requests are
 * posted to queue pairs, their completions arrive on completion queues.
 */

/// Queue pair transport service.
enum class IbQpType : uint8_t
{
    RC, ///< reliable connection
    UD  ///< unreliable datagram
};

/// Queue pair state (IBA 10.3).
enum class IbQpState : uint8_t
{
    RESET, ///< just created
    INIT,  ///< receives may be posted
    RTR,   ///< ready to receive
    RTS,   ///< ready to send
    SQE,   ///< send queue error (UD)
    ERR    ///< error: outstanding work completes with WR_FLUSH_ERR
};

/// Send work request opcode (ibv_wr_opcode).
enum class IbWrOpcode : uint8_t
{
    SEND,
    SEND_WITH_IMM,
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    RDMA_READ,
    ATOMIC_CMP_AND_SWP,
    ATOMIC_FETCH_AND_ADD
};

/// Work completion status (ibv_wc_status, the ones the model produces).
enum class IbWcStatus : uint8_t
{
    SUCCESS,
    LOC_LEN_ERR,      ///< a receive buffer was too small for the message
    LOC_PROT_ERR,     ///< a local SGE does not lie in a registered region with the access
    WR_FLUSH_ERR,     ///< the QP went to the error state before the WR completed
    REM_ACCESS_ERR,   ///< bad rkey, range or access rights at the responder (NAK 0x62)
    REM_INV_REQ_ERR,  ///< the responder found the request invalid (NAK 0x61)
    REM_OP_ERR,       ///< the responder could not carry the operation out (NAK 0x63)
    RETRY_EXC_ERR,    ///< transport retries (timeouts, sequence NAKs) exhausted
    RNR_RETRY_EXC_ERR ///< receiver-not-ready retries exhausted
};

/// Work completion opcode (ibv_wc_opcode).
enum class IbWcOpcode : uint8_t
{
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    COMP_SWAP,
    FETCH_ADD,
    RECV,
    RECV_RDMA_WITH_IMM
};

/// Memory access rights of a memory region (ibv_access_flags).
enum IbAccess : uint32_t
{
    IB_ACCESS_LOCAL_WRITE = 1,
    IB_ACCESS_REMOTE_WRITE = 2,
    IB_ACCESS_REMOTE_READ = 4,
    IB_ACCESS_REMOTE_ATOMIC = 8
};

/**
 * Attributes an RTS -> RTS IbQueuePair::Modify changes (ibv_qp_attr_mask's bits for the
 * attributes IBA lets that transition change); the other transitions set what they
 * require and ignore the mask.
 */
enum IbQpAttrMask : uint32_t
{
    IB_QP_ACCESS_FLAGS = 1,  ///< IbQpAttr::accessFlags (RC)
    IB_QP_QKEY = 2,          ///< IbQpAttr::qkey (UD)
    IB_QP_MIN_RNR_TIMER = 4, ///< IbQpAttr::minRnrTimer (RC)
};

/// A scatter/gather element: a piece of registered memory.
struct IbSge
{
    uint64_t addr{0};   ///< virtual address
    uint32_t length{0}; ///< bytes
    uint32_t lkey{0};   ///< local key of the region holding it
};

/// A send work request (ibv_send_wr, one SGE).
struct IbSendWr
{
    uint64_t wrId{0};                    ///< returned in the completion
    IbWrOpcode opcode{IbWrOpcode::SEND}; ///< operation
    IbSge sge;                           ///< local data (source; READ/atomic: destination)
    bool signaled{true};                 ///< generate a completion on success
    bool solicited{false};               ///< set the BTH SE bit on the last packet
    bool inlineData{false}; ///< IBV_SEND_INLINE: the data travels in the WQE (SEND, WRITE;
                            ///< at most the HCA's MaxInlineData bytes)
    uint32_t immData{0};    ///< immediate data (*_WITH_IMM)
    uint64_t remoteAddr{0}; ///< RDMA and atomic: remote virtual address
    uint32_t rkey{0};       ///< RDMA and atomic: remote key
    uint64_t compareAdd{0}; ///< atomic: compare value, or value to add
    uint64_t swap{0};       ///< atomic compare-and-swap: new value
    // UD address handle
    uint16_t udDlid{0};       ///< UD: destination LID (InfiniBand ports)
    Ipv4Address udRemoteIp;   ///< UD: destination IPv4 address (RoCE ports)
    uint8_t udSl{0};          ///< UD: service level
    uint32_t udRemoteQpn{0};  ///< UD: destination QP number
    uint32_t udRemoteQkey{0}; ///< UD: destination Q_Key
};

/// A receive work request (ibv_recv_wr, one SGE).
struct IbRecvWr
{
    uint64_t wrId{0}; ///< returned in the completion
    IbSge sge;        ///< where the message goes
};

/// A work completion (ibv_wc).
struct IbWorkCompletion
{
    uint64_t wrId{0};                       ///< the WR's id
    IbWcStatus status{IbWcStatus::SUCCESS}; ///< outcome
    IbWcOpcode opcode{IbWcOpcode::SEND};    ///< what completed
    uint32_t byteLen{0};                    ///< bytes received (receive completions)
    bool withImm{false};                    ///< immData is valid
    uint32_t immData{0};                    ///< immediate data
    uint32_t qpNum{0};                      ///< local QP number
    uint32_t srcQp{0};                      ///< UD: sender's QP number
    uint16_t slid{0};                       ///< UD: sender's LID (InfiniBand ports)
    Ipv4Address srcIp;                      ///< UD: sender's IPv4 address (RoCE ports)
    Time timestamp;                         ///< simulated time of completion
};

/// Attributes for IbQueuePair::Modify (ibv_qp_attr; fields used depend on the transition).
struct IbQpAttr
{
    IbQpState state{IbQpState::RESET}; ///< target state
    uint8_t portNum{1};                ///< HCA port (INIT)
    uint32_t qkey{0};                  ///< UD Q_Key (INIT)
    uint32_t accessFlags{0};           ///< RC: remote access allowed on this QP (INIT)
    uint32_t pathMtu{4096};            ///< RC: path MTU (RTR)
    uint32_t destQpNum{0};             ///< RC: remote QP number (RTR)
    uint16_t dlid{0};                  ///< RC: remote LID (RTR, InfiniBand ports)
    Ipv4Address remoteIp;              ///< RC: remote IPv4 address (RTR, RoCE ports)
    uint16_t udpSrcPort{0};            ///< RC on RoCE: UDP source port (RTR; 0: derived)
    uint8_t sl{0};                     ///< RC: service level (RTR)
    uint32_t rqPsn{0};                 ///< RC: first PSN expected from the remote (RTR)
    uint8_t maxDestRdAtomic{16};       ///< RC: READs/atomics the responder accepts (RTR)
    uint8_t minRnrTimer{1};            ///< RC: RNR NAK timer code advertised (RTR)
    uint32_t sqPsn{0};                 ///< RC: first PSN sent (RTS)
    uint8_t timeout{14};               ///< RC: local ACK timeout, 4.096 us * 2^timeout (RTS)
    uint8_t retryCnt{7};               ///< RC: transport retries (RTS)
    uint8_t rnrRetry{7};               ///< RC: RNR retries, 7 = infinite (RTS)
    uint8_t maxRdAtomic{16};           ///< RC: outstanding READs/atomics initiated (RTS)
    uint32_t mask{0}; ///< RTS -> RTS: the IbQpAttrMask bits to change (0: change nothing)
};

/**
 * @ingroup infiniband-transport
 * @param s a status
 * @return its libibverbs-style name, e.g. "REM_ACCESS_ERR"
 */
const char* IbWcStatusName(IbWcStatus s);

/**
 * @ingroup infiniband-transport
 * @param code an IBA RNR timer code (0..31)
 * @return the time it stands for (IBA table 45: code 0 = 655.36 ms, 1 = 0.01 ms, ...)
 */
Time IbRnrTimerValue(uint8_t code);

/**
 * @ingroup infiniband-transport
 * @param timeout an IBA local ACK timeout exponent (0 = infinite)
 * @return 4.096 us * 2^timeout, or Time::Max() for 0 (no timeout)
 */
Time IbAckTimeoutValue(uint8_t timeout);

} // namespace ns3

#endif /* IB_VERBS_H */
