/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_QUEUE_PAIR_H
#define IB_QUEUE_PAIR_H

#include "dcqcn-rate-control.h"
#include "ib-cc-rate-control.h"
#include "ib-verbs.h"
#include "rdma-port.h"

#include "ns3/event-id.h"
#include "ns3/ib-fifo.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ns3
{

class IbCompletionQueue;
class IbHca;
class IbMemoryRegion;
class RdmaPort;
class Packet;

/**
 * @ingroup infiniband-transport
 * @brief Counters of one queue pair.
 */
struct IbQpCounters
{
    uint64_t packetsSent{0};          ///< packets handed to the port (all kinds)
    uint64_t packetsReceived{0};      ///< packets that arrived for this QP
    uint64_t retransmittedPackets{0}; ///< request packets sent again (go-back-N)
    uint64_t retransmitEpisodes{0};   ///< times the requester went back (Retransmit trace)
    uint64_t timeouts{0};             ///< local ACK timeouts
    uint64_t duplicatesReceived{0};   ///< requests with a PSN already executed
    uint64_t readRestarts{0};         ///< READ responses restarted where a duplicate asked
    uint64_t outOfSequenceDropped{0}; ///< requests beyond the expected PSN, dropped
    uint64_t duplicateResponses{0};   ///< responses for PSNs already acknowledged
    uint64_t naksSent{0};             ///< NAKs sent (sequence, access, invalid, op.)
    uint64_t rnrNaksSent{0};          ///< RNR NAKs sent
    uint64_t naksReceived{0};         ///< NAKs received
    uint64_t rnrNaksReceived{0};      ///< RNR NAKs received
    uint64_t acksSent{0};             ///< ACKNOWLEDGE packets sent
    uint64_t qkeyDrops{0};            ///< UD packets dropped for a Q_Key mismatch
    uint64_t noRecvDrops{0};          ///< UD packets dropped for lack of a receive WR
    uint64_t stateDrops{0};           ///< packets dropped because of the QP state
    uint64_t sourceDrops{0};          ///< RC packets not from the connected peer's LID
    uint64_t cnpsSent{0};             ///< CNPs sent for CE- (RoCE) or FECN-marked (IB) packets
    uint64_t cnpsReceived{0};         ///< CNPs received (DCQCN or IB CC reaction point)
    uint64_t becnsReceived{0};        ///< InfiniBand: BECNs received (in CNPs or other packets)
    uint64_t requestsHeld{0};         ///< adaptive routing: requests that came early and waited
    uint64_t responsesHeld{0};        ///< adaptive routing: READ responses that came early
    uint64_t placedOnArrival{0};      ///< of those held, packets whose data was placed at once
};

/**
 * @ingroup infiniband-transport
 * @brief A queue pair (ibv_qp) of the RC or UD transport service, created by
 * IbHca::CreateQp.
 *
 * State machine (IBA 10.3): RESET -> INIT -> RTR -> RTS by Modify(); INIT -> INIT sets the
 * INIT attributes again; RTS -> RTS changes the attributes IbQpAttr::mask names (RC: access
 * flags, RNR timer; UD: Q_Key) and keeps the rest; any state -> ERR (outstanding work completes
 * with WR_FLUSH_ERR) and any state -> RESET (work is discarded without completions). Other
 * transitions are refused with a message.
 *
 * RC requester: messages are cut into path-MTU packets with the IBA opcodes (SEND and
 * RDMA WRITE First/Middle/Last/Only, with immediate data on Last/Only, RETH on WRITE
 * First/Only, READ Request with RETH, CmpSwap/FetchAdd with AtomicETH). PSNs are 24-bit
 * and wrap. Packets are generated when the port has room for them, never stored:
 * a retransmission rebuilds the packet from the WR and the PSN. The send window is
 * MaxOutstandingPackets PSNs beyond the oldest unacknowledged one; at most maxRdAtomic
 * READs and atomics are outstanding. AckReq is set on the last packet of each message,
 * every AckCoalescing packets and when the window fills. ACKs retire WRs in order
 * (signaled ones complete); a NAK-PSN-sequence-error, a local ACK timeout or a missing
 * READ response makes the requester go back to the oldest incomplete PSN (go-back-N;
 * SEND/WRITE packets the responder has already acknowledged behind an incomplete READ
 * are skipped, the READ is asked again for its missing part only). Each such retry counts
 * against retryCnt (exhausted -> RETRY_EXC_ERR); the count restarts whenever the
 * responder acknowledges a new PSN. An RNR NAK pauses the QP for the RNR timer and then
 * goes back (rnrRetry, 7 = infinite); a remote access, invalid request or operational NAK
 * completes the WR with REM_ACCESS_ERR, REM_INV_REQ_ERR or REM_OP_ERR and puts the QP in
 * ERR, flushing the rest.
 *
 * RC responder: in-order requests are executed; the first packet beyond the expected
 * PSN causes one NAK-PSN-sequence-error, and out-of-order packets are dropped until the
 * expected one arrives; duplicates are acknowledged again (READs are executed again,
 * atomics answered from a per-QP history of their original values so that they apply
 * exactly once); a SEND (or WRITE with immediate) finding no receive WR gets an RNR NAK
 * with minRnrTimer and is not executed; a bad R_Key, a range outside the region or a
 * missing right gets a remote-access NAK, a malformed request an invalid-request NAK,
 * after which the responder QP goes to ERR too. ACKs are sent on AckReq and at least
 * every AckCoalescing packets; responses leave in PSN order. The atomic history holds
 * max(16, maxDestRdAtomic) entries, enough as long as the requester's maxRdAtomic does
 * not exceed the responder's maxDestRdAtomic (IbHcaHelper::ConnectRc caps each side's
 * maxRdAtomic at the peer's maxDestRdAtomic; QPs moved to RTS by hand must keep to it:
 * the responder does not otherwise enforce maxDestRdAtomic).
 *
 * UD: SEND Only (with immediate) with a DETH; the receiver drops (and counts) packets
 * with a wrong Q_Key or with no receive WR. As in verbs, the first 40 bytes of a UD
 * receive buffer are reserved for the GRH and counted in byteLen; a buffer too small
 * for the datagram completes with LOC_LEN_ERR (the QP stays in RTS).
 *
 * Posting: PostSend and PostRecv refuse (return false with a message) a WR posted in a
 * state that does not accept it, to a full queue, whose SGE is not inside a region
 * registered on this HCA with the right lkey and (for receive, READ and atomic
 * destinations) local write access, an atomic that is not 8 bytes to an 8-byte aligned
 * address, or a UD message longer than the MTU. This is a choice: real verbs accept
 * such a WR and complete it with LOC_PROT_ERR. In the ERR state posting is accepted and
 * the WR completes with WR_FLUSH_ERR, as in verbs.
 */
class IbQueuePair : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbQueuePair();
    ~IbQueuePair() override;

    /**
     * TracedCallback signature of Retransmit.
     * @param psn the PSN the requester goes back to
     * @param reason "timeout", "nak-sequence", "rnr" or "missing-response"
     */
    typedef void (*RetransmitTracedCallback)(uint32_t psn, const std::string& reason);
    /**
     * TracedCallback signature of NakSent, NakReceived and RnrNakReceived.
     * @param psn the NAK's PSN
     * @param syndrome the AETH syndrome
     */
    typedef void (*NakTracedCallback)(uint32_t psn, uint8_t syndrome);
    /**
     * TracedCallback signature of MessageReceived.
     * @param qpNum this QP's number
     * @param kind SEND, SEND_WITH_IMM, RDMA_WRITE or RDMA_WRITE_WITH_IMM
     * @param length message length in bytes
     * @param addr where it was placed (WRITE: remote VA; SEND: receive buffer; UD SEND:
     *        the receive buffer plus its 40-byte GRH area)
     */
    typedef void (*MessageTracedCallback)(uint32_t qpNum,
                                          IbWrOpcode kind,
                                          uint32_t length,
                                          uint64_t addr);

    /**
     * Set the queue pair up (called by IbHca::CreateQp).
     * @param hca the HCA
     * @param qpn its number
     * @param type RC or UD
     * @param sendCq send completion queue
     * @param recvCq receive completion queue
     * @param maxSendWr send queue size
     * @param maxRecvWr receive queue size
     */
    void Setup(IbHca* hca,
               uint32_t qpn,
               IbQpType type,
               Ptr<IbCompletionQueue> sendCq,
               Ptr<IbCompletionQueue> recvCq,
               uint32_t maxSendWr,
               uint32_t maxRecvWr);

    /// @return the QP number
    uint32_t GetQpNum() const;
    /// @return RC or UD
    IbQpType GetType() const;
    /// @return the current state
    IbQpState GetState() const;
    /// @return the attributes given so far
    const IbQpAttr& GetAttr() const;
    /**
     * For a program that stops on a failed completion: what failed, between which LIDs and
     * QPs, and what usually causes the status and what to check or change.
     * @param wc a completion of this QP (any status)
     * @return e.g. "QP 2 (RC, to LID 5 QP 3): WR 0 completed with RETRY_EXC_ERR: ..."
     */
    std::string DescribeCompletion(const IbWorkCompletion& wc) const;
    /// @return the HCA
    Ptr<IbHca> GetHca() const;
    /// @return the send completion queue
    Ptr<IbCompletionQueue> GetSendCq() const;
    /// @return the receive completion queue
    Ptr<IbCompletionQueue> GetRecvCq() const;
    /// @return the counters
    const IbQpCounters& GetCounters() const;

    /// @return the DCQCN reaction point (RoCE ports; idle at the line rate otherwise)
    const DcqcnRateControl& GetRateControl() const
    {
        return m_dcqcn;
    }

    /// @return the InfiniBand congestion control reaction point the QP is paced by (its own,
    ///         or its port's for its SL), or null when IBA congestion control is off
    const IbCcRateControl* GetIbRateControl() const
    {
        return m_cc;
    }

    /// @return send WRs posted and not yet completed
    uint32_t GetSendQueueLength() const;
    /**
     * @param mr a memory region
     * @return what of this QP's outstanding work still reads or writes @p mr ("a posted
     *         send WR", ...), or null if nothing does
     */
    const char* GetUseOf(const IbMemoryRegion* mr) const;
    /// @return receive WRs posted and not yet consumed
    uint32_t GetRecvQueueLength() const;

    /**
     * Change the state (and attributes). As in verbs, timeout, retryCnt, rnrRetry and
     * maxRdAtomic are taken on RTR->RTS only; RTS->RTS and SQE->RTS leave them as they are.
     * @param attr the target state and the attributes that transition uses
     * @param error if not null, receives the reason of a refusal
     * @return false if the transition or an attribute is invalid (nothing changes)
     */
    bool Modify(const IbQpAttr& attr, std::string* error = nullptr);
    /**
     * Post a send work request.
     * @param wr the WR
     * @param error if not null, receives the reason of a refusal
     * @return false if refused
     */
    bool PostSend(const IbSendWr& wr, std::string* error = nullptr);
    /**
     * Post a receive work request.
     * @param wr the WR
     * @param error if not null, receives the reason of a refusal
     * @return false if refused
     */
    bool PostRecv(const IbRecvWr& wr, std::string* error = nullptr);

    /**
     * @param s a state
     * @return its name, e.g. "RTS"
     */
    static const char* StateName(IbQpState s);

  protected:
    void DoDispose() override;

  private:
    friend class IbHca;

    /// A send WR in the send queue.
    struct SendWqe
    {
        IbSendWr wr;                 ///< the request
        IbMemoryRegion* mr{nullptr}; ///< region of the local SGE (null for 0 bytes)
        uint32_t firstPsn{0};        ///< PSN of its first packet (RC)
        uint32_t npkts{1};           ///< PSNs it uses (READ: response packets)
        Time readyAt;                ///< doorbell done: may be sent from then on
        bool readAtomic{false};      ///< READ or atomic
        uint32_t requestedAt{0};     ///< READ/atomic: m_rewinds when last re-requested, or 0
        uint32_t replayBefore{0};    ///< READ/atomic re-requested: m_nextNewPsn then
    };

    /// A receive WR in the receive queue.
    struct RecvWqe
    {
        IbRecvWr wr;                 ///< the request
        IbMemoryRegion* mr{nullptr}; ///< region of its SGE (null for 0 bytes)
    };

    /// Kinds of queued responder packets.
    enum RespKind : uint8_t
    {
        RESP_ACK,       ///< ACKNOWLEDGE with an ACK syndrome
        RESP_NAK,       ///< ACKNOWLEDGE with a NAK or RNR NAK syndrome
        RESP_READ,      ///< READ response packets
        RESP_ATOMIC_ACK ///< ATOMIC ACKNOWLEDGE
    };

    /// A queued responder packet (or train of READ response packets).
    struct Response
    {
        RespKind kind{RESP_ACK};     ///< what to send
        uint8_t syndrome{0};         ///< AETH syndrome
        bool fatal{false};           ///< go to ERR once sent
        uint32_t psn{0};             ///< PSN (READ: of the first response packet)
        uint32_t msn{0};             ///< MSN to report
        Time readyAt;                ///< not before
        uint64_t va{0};              ///< READ: remote address of the first byte
        IbMemoryRegion* mr{nullptr}; ///< READ: region read
        uint32_t length{0};          ///< READ: bytes
        uint32_t npkts{0};           ///< READ: packets
        uint32_t sent{0};            ///< READ: packets sent so far
        uint64_t orig{0};            ///< ATOMIC ACK: original value
    };

    /// A parsed incoming packet.
    struct Rx
    {
        uint8_t opcode{0};     ///< BTH opcode
        bool ackReq{false};    ///< BTH AckReq
        uint32_t psn{0};       ///< BTH PSN
        uint32_t src{0};       ///< the sender: LRH SLID or IPv4 source address
        uint8_t sl{0};         ///< LRH SL or priority
        bool congested{false}; ///< FECN or ECN CE
        uint32_t hdrBytes{0};  ///< link headers + BTH + extension headers
        uint32_t payload{0};   ///< payload bytes
        uint64_t va{0};        ///< RETH / AtomicETH VA
        uint32_t rkey{0};      ///< RETH / AtomicETH R_Key
        uint32_t dmaLen{0};    ///< RETH DMA length
        uint64_t swapAdd{0};   ///< AtomicETH SwapOrAdd
        uint64_t compare{0};   ///< AtomicETH Compare
        uint8_t syndrome{0};   ///< AETH syndrome
        uint32_t msn{0};       ///< AETH MSN
        uint64_t orig{0};      ///< AtomicAckETH original data
        uint32_t imm{0};       ///< ImmDt
        bool hasImm{false};    ///< ImmDt present
        uint32_t qkey{0};      ///< DETH Q_Key
        uint32_t srcQp{0};     ///< DETH SrcQP
    };

    /// One entry of the responder's atomic history.
    struct AtomicRecord
    {
        uint32_t psn{0};   ///< the atomic's PSN
        uint64_t orig{0};  ///< the value it returned
        bool valid{false}; ///< slot used
    };

    // --- scheduling (called by IbHca)
    /**
     * @return the time the next packet of this QP can be sent: now or earlier if one is
     *         ready, a later time if one will be, Time::Max() if it waits for the peer
     */
    Time NextSendTime();
    /**
     * Build the next packet: a response or a request, alternating when both are ready.
     * @return the packet, or nullptr if nothing is ready now
     */
    Ptr<Packet> PullPacket();
    /// @return the VL of the next packet
    uint8_t CurrentVl() const;
    /// @return the port number the QP uses
    uint8_t GetPortNum() const;

    /**
     * A packet for this QP arrived.
     * @param packet the packet (LRH first)
     */
    void Receive(Ptr<Packet> packet, const RdmaRxInfo& info);
    /// Let the HCA schedule this QP now or at the time its next packet is ready.
    void Kick();
    /// The pending wake-up (m_wakeEvent) fired: none is pending any more; Kick.
    void Wake();
    /**
     * Call Kick at @p t (one pending wake-up event at most).
     * @param t the time
     */
    void WakeAt(Time t);

    // --- packet building
    /**
     * @param opcode BTH opcode
     * @param psn PSN
     * @param ackReq AckReq bit
     * @param solicited SE bit
     * @param remote destination address (LID or IPv4 address)
     * @param sl service level (priority on RoCE)
     * @param destQp destination QP
     * @param p payload with extension headers
     * @param zeroTail virtual payload bytes at the end of @p p
     * @return the sealed packet
     */
    Ptr<Packet> Seal(uint8_t opcode,
                     uint32_t psn,
                     bool ackReq,
                     bool solicited,
                     uint32_t remote,
                     uint8_t sl,
                     uint32_t destQp,
                     Ptr<Packet> p,
                     uint32_t zeroTail);
    /**
     * @param mr the region (may be null for 0 bytes)
     * @param addr first address
     * @param len bytes
     * @param zeroTail receives the number of virtual bytes
     * @return a payload packet: real bytes in data mode, virtual otherwise
     */
    Ptr<Packet> MakePayload(IbMemoryRegion* mr, uint64_t addr, uint32_t len, uint32_t& zeroTail);
    /// @return the next responder packet (the head of m_resp is ready)
    Ptr<Packet> BuildResponse();
    /// @return the next RC request packet (the requester may send)
    Ptr<Packet> BuildRcRequest();
    /// @return the next UD packet
    Ptr<Packet> BuildUdSend();
    /**
     * @return when the requester can send: now or earlier, later, or Time::Max()
     */
    Time RequesterReadyAt() const;
    /**
     * @return when the responder can send: now or earlier, later, or Time::Max()
     */
    Time ResponderReadyAt() const;
    /// @return payload bytes of the front READ response's next packet
    uint32_t NextResponsePayload() const;
    /// @return payload bytes the next request packet fetches from host memory (0 for a
    ///         READ request, an atomic or inline data)
    uint32_t NextRequestPayload() const;

    // --- requester
    /**
     * Acknowledge every PSN before @p target: retire SEND/WRITE WRs, stop at a READ or
     * atomic whose responses are still missing.
     * @param target PSN one past the last acknowledged
     * @return true if it stopped at an incomplete READ/atomic before @p target
     */
    bool AckUpTo(uint32_t target);
    /// The oldest unacknowledged PSN advanced: reset the retry counters.
    void Progress();
    /**
     * Retire the WRs before the acknowledged PSN, up to the first READ or atomic whose
     * responses are missing.
     * @return true if such a READ or atomic lies before the acknowledged PSN
     */
    bool RetireAcknowledged();
    /// Move the transmit position past SEND/WRITE packets already acknowledged.
    void SkipAcknowledged();
    /**
     * Remove the completed WR at the head of the send queue.
     * @param status its status
     */
    void RetireFront(IbWcStatus status);
    /**
     * A READ or atomic at the head of the send queue was executed but lost (some of) its
     * responses: go back to it (one retry per episode: nothing more until progress).
     * @param byAck true if a plain ACK covering it shows the loss: not taken as one when
     *        the head was requested again since the last go-back and the ACK is for a PSN
     *        sent before that (a duplicate's: the responder replays the head's responses
     *        after the ACKs for the duplicates before it)
     * @param ackPsn the ACK's PSN (with @p byAck)
     */
    void GoBackForMissingResponse(bool byAck = false, uint32_t ackPsn = 0);
    /**
     * Go back to the oldest unacknowledged PSN.
     * @param reason for the Retransmit trace
     */
    void Rewind(const char* reason);
    /**
     * Go back after a transport error, counting it against retryCnt.
     * @param reason for the Retransmit trace
     */
    void RetryOrFail(const char* reason);
    /// The local ACK timer fired.
    void RetryTimerExpired();
    /// Start the local ACK timer if it is not running.
    void ArmRetryTimer();
    /**
     * A response arrived.
     * @param rx the parsed packet
     * @param packet the packet
     */
    void ReceiveResponse(const Rx& rx, Ptr<Packet> packet);
    /**
     * Complete the head WR with an error and go to ERR.
     * @param status the error
     */
    void FailFront(IbWcStatus status);

    // --- responder
    /**
     * A request arrived.
     * @param rx the parsed packet
     * @param packet the packet
     */
    void ReceiveRequest(const Rx& rx, Ptr<Packet> packet);
    // The phases of ReceiveRequest, defined in ib-queue-pair-responder.cc and called only
    // there: always inlined, so that the per-packet path stays one function (the library is
    // PIC, where GCC would call a plain member function through the PLT, and the larger
    // phases exceed its inlining limits even when declared inline).
    /**
     * Check a request's PSN: count and drop it after a fatal NAK, NAK the first packet
     * beyond the expected PSN, hand a duplicate to ReceiveDuplicate.
     * @param rx the parsed packet
     * @return true if it has the expected PSN (to be executed)
     */
    [[gnu::always_inline]] inline bool CheckRequestPsn(const Rx& rx);
    /**
     * End the message in progress after a fatal NAK: a SEND's receive WR completes with
     * @p status.
     * @param status the completion status of that WR
     */
    [[gnu::always_inline]] inline void EndMessageInProgress(IbWcStatus status);
    /**
     * Answer a request with a fatal invalid-request NAK.
     * @param rx the parsed packet
     */
    [[gnu::always_inline]] inline void NakInvalidRequest(const Rx& rx);
    /**
     * Answer a request with a fatal remote-access-error NAK.
     * @param rx the parsed packet
     */
    [[gnu::always_inline]] inline void NakRemoteAccess(const Rx& rx);
    /**
     * Answer a request with an RNR NAK (no receive WR) and drop what follows until the
     * retry.
     * @param rx the parsed packet
     */
    [[gnu::always_inline]] inline void NakNotReady(const Rx& rx);
    /**
     * Execute a SEND packet with the expected PSN.
     * @param rx the parsed packet
     * @param packet the packet
     * @return true if executed (to be acknowledged), false if NAKed
     */
    [[gnu::always_inline]] inline bool ReceiveSend(const Rx& rx, const Ptr<Packet>& packet);
    /**
     * Execute an RDMA WRITE packet with the expected PSN.
     * @param rx the parsed packet
     * @param packet the packet
     * @return true if executed (to be acknowledged), false if NAKed
     */
    [[gnu::always_inline]] inline bool ReceiveWrite(const Rx& rx, const Ptr<Packet>& packet);
    /**
     * Execute an RDMA READ request with the expected PSN: queue its responses.
     * @param rx the parsed packet
     */
    [[gnu::always_inline]] inline void ReceiveReadRequest(const Rx& rx);
    /**
     * Execute an atomic with the expected PSN: queue its ATOMIC ACKNOWLEDGE.
     * @param rx the parsed packet
     */
    [[gnu::always_inline]] inline void ReceiveAtomic(const Rx& rx);
    /**
     * Queue the response packets of a READ request (new or duplicate) at the responder.
     * @param rx the parsed request
     * @param mr the region it reads (nullptr for a 0-byte READ)
     * @return the number of response packets (PSNs) it uses
     */
    uint32_t QueueReadResponse(const Rx& rx, IbMemoryRegion* mr);
    /**
     * A duplicate request arrived.
     * @param rx the parsed packet
     */
    void ReceiveDuplicate(const Rx& rx);
    /**
     * A UD packet arrived.
     * @param rx the parsed packet
     * @param packet the packet
     */
    void ReceiveUd(const Rx& rx, Ptr<Packet> packet);
    /// Queue (or update the queued) ACK for the last executed PSN.
    void QueueAck();
    /**
     * Queue a NAK.
     * @param syndrome NAK or RNR NAK syndrome
     * @param psn its PSN
     * @param fatal the responder goes to ERR once it is sent
     */
    void QueueNak(uint8_t syndrome, uint32_t psn, bool fatal);
    /**
     * Copy a packet's payload to memory (data mode).
     * @param packet the packet
     * @param rx its parsed headers
     * @param mr destination region
     * @param addr destination address
     */
    void Place(Ptr<Packet> packet, const Rx& rx, IbMemoryRegion* mr, uint64_t addr);
    /**
     * A received message has been placed: complete its receive WR (if any) and fire
     * MessageReceived, PcieWriteLatency from now.
     * @param kind the message kind
     * @param length bytes
     * @param addr where it went
     * @param recv the receive WR it consumed, or null
     * @param imm immediate data, if @p hasImm
     * @param hasImm immediate data present
     */
    void MessageDone(IbWrOpcode kind,
                     uint32_t length,
                     uint64_t addr,
                     const RecvWqe* recv,
                     uint32_t imm,
                     bool hasImm);
    /**
     * Parse an incoming packet's headers.
     * @param packet the packet
     * @param rx receives the fields
     * @return false if malformed
     */
    bool Parse(Ptr<Packet> packet, const RdmaRxInfo& info, Rx& rx) const;

    // --- common
    /**
     * Generate a completion.
     * @param cq the completion queue
     * @param wrId the WR id
     * @param status the status
     * @param opcode the completion opcode
     * @param byteLen bytes
     */
    void Complete(const Ptr<IbCompletionQueue>& cq,
                  uint64_t wrId,
                  IbWcStatus status,
                  IbWcOpcode opcode,
                  uint32_t byteLen);
    /**
     * @param outstanding PSNs sent and not yet acknowledged
     * @return how much of the send window they use: each READ in flight counts as the one
     *         request packet it is, not as the PSNs of its responses
     */
    uint32_t WindowUse(uint32_t outstanding) const;
    /// Enter ERR: flush both queues.
    void EnterError();
    /// Forget all work and transport state (to RESET).
    void ResetState();
    /// At RTR: start DCQCN on a RoCE port (if the HCA has it on), else leave it idle.
    void StartRateControl();
    /// A CNP arrived for this QP (DCQCN reaction point).
    void ReceiveCnp();
    /// A BECN arrived for this QP (InfiniBand congestion control reaction point).
    void ReceiveBecn();
    /**
     * Adaptive routing: keep a request that arrived ahead of the expected PSN, within the
     * send window, until its turn.
     * @param rx its parsed headers
     * @param packet the packet
     * @param info its link-layer facts
     * @return true if it was kept
     */
    bool HoldEarlyRequest(const Rx& rx, Ptr<Packet> packet, const RdmaRxInfo& info);
    /// Adaptive routing: process the kept requests whose turn has come.
    void ReleaseHeldRequests();
    /**
     * Adaptive routing, requester: keep a READ response that arrived ahead of the next
     * expected response PSN, within the send window, until its turn.
     * @param rx its parsed headers
     * @param packet the packet
     * @param info its link-layer facts
     * @return true if it was kept
     */
    bool HoldEarlyResponse(const Rx& rx, Ptr<Packet> packet, const RdmaRxInfo& info);
    /// Adaptive routing, requester: process the kept READ responses whose turn has come.
    void ReleaseHeldResponses();

    /// @return the earliest time rate control lets the next data packet leave
    Time PacedUntil() const
    {
        const Time t = m_dcqcn.NextTransmitTime();
        return m_cc == nullptr ? t : std::max(t, m_cc->NextTransmitTime());
    }

    /**
     * @param error where to write
     * @param msg the message
     * @return false
     */
    bool Refuse(std::string* error, const std::string& msg) const;
    /**
     * Find the local region of a work request's SGE, or refuse the post.
     * @param sge the SGE (length 0 needs no region)
     * @param write whether the HCA writes into it (receives, READ and atomic results)
     * @param verb "PostSend" or "PostRecv", for the message
     * @param [out] mr the region, nullptr for an empty SGE
     * @param [out] error why the post is refused
     * @return false if the SGE is not inside a registered region with the access needed
     */
    bool LocalRegion(const IbSge& sge,
                     bool write,
                     const char* verb,
                     IbMemoryRegion** mr,
                     std::string* error) const;
    /**
     * The memory region a remote request may use: the rkey names a region that covers
     * [va, va + len) with @p access, and the QP allows that access.
     * @param rkey remote key from the request
     * @param va start address
     * @param len bytes
     * @param access the IbAccess right needed
     * @return the region, or nullptr (a remote access error)
     */
    IbMemoryRegion* RemoteRegion(uint32_t rkey, uint64_t va, uint64_t len, uint32_t access) const;

    // Identity
    IbHca* m_hca;                    //!< owning HCA
    uint32_t m_qpn;                  //!< QP number
    IbQpType m_type;                 //!< RC or UD
    IbQpState m_state;               //!< state
    IbQpAttr m_attr;                 //!< attributes
    Ptr<IbCompletionQueue> m_sendCq; //!< send CQ
    Ptr<IbCompletionQueue> m_recvCq; //!< receive CQ
    uint32_t m_maxSendWr;            //!< send queue size
    uint32_t m_maxRecvWr;            //!< receive queue size
    RdmaPort* m_dev;                 //!< the port (cached)
    uint32_t m_remote{0};            //!< RC: the remote address (LID or IPv4, RTR)
    uint16_t m_entropy{0};           //!< RC: flow entropy (RoCE UDP source port, RTR)
    uint8_t m_vl;                    //!< RC: VL of the path's SL on the port
    uint32_t m_udCheckedDlid{0};     //!< UD: last destination whose first hop was checked
    uint32_t m_pmtu;                 //!< path MTU (RC) or port MTU (UD)
    bool m_inReadyList;              //!< waiting in the HCA's ready list
    bool m_lastWasResponse;          //!< the last packet pulled was a response
    EventId m_wakeEvent;             //!< pending wake-up
    Time m_wakeAt{Time::Max()};      //!< its time (Time::Max(): none pending)

    // Requester
    std::deque<SendWqe> m_sq;       //!< send queue: unacknowledged and unsent WRs
    uint32_t m_nextPostPsn;         //!< first PSN of the next posted WR
    uint32_t m_unackedPsn;          //!< oldest PSN not complete (ACKed, or READ data in)
    uint32_t m_ackedPsn;            //!< the responder has executed every PSN before this
    uint32_t m_txIdx;               //!< index in m_sq of the WR being sent
    uint32_t m_txPsn;               //!< PSN of the next request packet
    uint32_t m_nextNewPsn;          //!< one past the highest PSN ever sent
    uint32_t m_rdAtomicOut;         //!< READs/atomics sent and not complete
    uint8_t m_retriesLeft;          //!< transport retries left
    uint8_t m_rnrRetriesLeft;       //!< RNR retries left
    bool m_gapRewound;              //!< went back for a missing response: wait for progress
    uint32_t m_rewinds{0};          //!< go-backs so far (SendWqe::requestedAt)
    Time m_lastProgress;            //!< last ACK progress (base of the local ACK timer)
    Time m_rnrUntil;                //!< paused by an RNR NAK until then
    DcqcnRateControl m_dcqcn;       //!< RoCE: DCQCN reaction point (idle, unpaced, on InfiniBand)
    IbCcRateControl m_ownCc;        //!< InfiniBand: IBA CC reaction point of this QP (per-QP mode)
    IbCcRateControl* m_cc{nullptr}; //!< InfiniBand: the reaction point pacing it, or null
    Time m_lastCnpSent;             //!< RoCE: when this QP's notification point last sent a CNP
    bool m_cnpSentOnce{false};      //!< RoCE: m_lastCnpSent is valid
    EventId m_retryTimer;           //!< local ACK timer
    bool m_retryArmed{false};       //!< m_retryTimer is scheduled

    // Responder
    IbFifo<RecvWqe> m_rq;  //!< receive queue
    bool m_reorder{false}; //!< requests and READ responses may come out of order (AR)

    /// An early request or READ response kept until its turn (adaptive routing).
    struct HeldPacket
    {
        Ptr<Packet> packet; ///< the packet (null: the slot is free)
        RdmaRxInfo info;    ///< its link-layer facts
        uint32_t psn{0};    ///< its PSN
        bool placed{
            false}; ///< its data was placed on arrival (HoldEarlyRequest, HoldEarlyResponse)
    };

    /// the packet being processed had its data placed on arrival: Place skips it once
    bool m_skipPlace{false};

    /**
     * Packets that came early (adaptive routing), each in the slot of its PSN modulo a
     * power of two at least the send window, so that the PSNs of one window fall in distinct
     * slots, also across the 2^24 wrap. Empty until the first early packet.
     */
    struct HeldPackets
    {
        std::vector<HeldPacket> slots; ///< by PSN modulo their number
        uint32_t count{0};             ///< slots in use

        /**
         * Keep a packet until its turn.
         * @param psn its PSN
         * @param packet the packet
         * @param info its link-layer facts
         * @param window the send window (packets)
         * @return its slot, or null if a copy of it is kept already (a resent one)
         */
        HeldPacket* Keep(uint32_t psn, Ptr<Packet> packet, const RdmaRxInfo& info, uint32_t window);
        /**
         * @param psn the PSN whose turn has come
         * @return the packet kept for it, taken out (no packet if none)
         */
        HeldPacket Take(uint32_t psn);
        /// Drop what is kept (the slots stay).
        void Drop();
    };

    HeldPackets m_held;                    //!< early requests (responder)
    HeldPackets m_heldResp;                //!< early READ responses (requester)
    uint32_t m_ePsn;                       //!< expected PSN
    uint32_t m_msn;                        //!< message sequence number
    bool m_nakSent;                        //!< sequence NAK/RNR NAK sent, not yet cleared
    bool m_responderFailed;                //!< a fatal NAK is queued
    uint32_t m_ackCount;                   //!< packets since the last ACK
    std::deque<Response> m_resp;           //!< responses in PSN order
    uint32_t m_rdAtomicQueued;             //!< READ/atomic responses queued
    std::vector<AtomicRecord> m_atomicLog; //!< recent atomics by PSN
    uint32_t m_atomicNext;                 //!< next slot of m_atomicLog
    uint8_t m_inKind;                      //!< 0 none, 1 SEND, 2 WRITE in progress
    RecvWqe m_inRecv;                      //!< SEND in progress: its receive WR
    uint64_t m_inVa;                       //!< WRITE in progress: VA of its first byte
    IbMemoryRegion* m_inMr;                //!< WRITE in progress: region
    uint32_t m_inLen;                      //!< WRITE in progress: DMA length
    uint32_t m_inOffset;                   //!< bytes placed so far

    IbQpCounters m_counters; //!< counters

    // Traces
    TracedCallback<uint32_t, const std::string&> m_retransmitTrace;      //!< Retransmit
    TracedCallback<uint32_t, uint8_t> m_nakSentTrace;                    //!< NakSent
    TracedCallback<uint32_t, uint8_t> m_nakReceivedTrace;                //!< NakReceived
    TracedCallback<uint32_t, uint8_t> m_rnrNakReceivedTrace;             //!< RnrNakReceived
    TracedCallback<uint32_t, IbWrOpcode, uint32_t, uint64_t> m_msgTrace; //!< MessageReceived
};

} // namespace ns3

#endif /* IB_QUEUE_PAIR_H */
