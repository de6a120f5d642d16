/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RAW_TRAFFIC_APPLICATION_H
#define IB_RAW_TRAFFIC_APPLICATION_H

#include "ns3/application.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ib-tx-start-listener.h"
#include "ns3/traced-callback.h"

namespace ns3
{

class IbNetDevice;
class Packet;

/**
 * @ingroup infiniband-apps
 * @brief Sends raw IBA packets (RC SEND Only, virtual payload) from one port, to drive a
 * link or fabric before any transport is involved.
 *
 * Each packet is LRH | BTH | payload | pad | ICRC | VCRC with the chosen SL, DLID,
 * destination QP and consecutive PSNs. With DataRate 0 the application saturates its VL:
 * it keeps QueueTarget packets in the port's transmit queue for that VL and tops it up
 * whenever the port starts a packet on it (an IbTxStartListener of the port), so the link
 * never idles for lack of data.
 * Otherwise it sends at DataRate, counted in wire bytes (headers and CRCs included).
 * The SLID of every packet is the port's LID when the application starts: assign LIDs
 * (IbFabricHelper, IbSubnetManager) before that. When it starts it also stops, with a
 * message, if the first hop would drop every packet (no route for Dlid in the switch the
 * cable leads to, or another LID on the port at the other end of a back-to-back cable).
 *
 * Received packets are not consumed here: count them at the receiving port's MacRx.
 */
class IbRawTrafficApplication : public Application, public IbTxStartListener
{
  public:
    /**
     * @brief Get the TypeId
     * @return the TypeId for this class
     */
    static TypeId GetTypeId();

    IbRawTrafficApplication();
    ~IbRawTrafficApplication() override;

    /**
     * @param device the port to send from (default: the node's first IbNetDevice)
     */
    void SetDevice(Ptr<IbNetDevice> device);
    /// @return packets sent so far
    uint64_t GetSent() const;
    /// @return the source LID (the port's, once the application has started; else 0)
    uint16_t GetSlid() const;
    /// @return the Dlid attribute
    uint16_t GetDlid() const;
    /// @return when it queued its last packet (MaxPackets) on the port or was stopped;
    ///         Time::Max() while it sends (or before it starts)
    Time GetEndTime() const;

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    /// Build and queue one packet. @return true if the port accepted it
    bool SendOne();
    /// Timer of rate mode.
    void SendTimer();
    /**
     * Saturating mode: the port started a packet; top up the VL queue if it was ours.
     * @param vl the packet's VL
     * @return true if a packet was queued
     */
    bool TxStarted(uint8_t vl) override;
    /**
     * Top up the VL queue to QueueTarget packets (saturating mode).
     * @return true if a packet was queued
     */
    bool TopUp();
    /// @return true once MaxPackets have been sent
    bool Done() const;
    /**
     * Abort, naming the DLID and where it ends, if the first hop would drop every packet:
     * the switch the port's cable leads to has no route for m_dlid, or the port on the
     * other end of a back-to-back cable has another LID. Nothing is checked when the port
     * has no cable or its cable no other end.
     */
    void CheckDlidIsReachable() const;

    Ptr<IbNetDevice> m_device;                   //!< sending port
    uint16_t m_dlid;                             //!< destination LID
    uint16_t m_slid{0};                          //!< m_device's LID when the application started
    uint8_t m_sl;                                //!< service level
    uint8_t m_vl;                                //!< VL the SL maps to on m_device
    uint32_t m_payloadSize;                      //!< payload bytes per packet
    uint32_t m_destQp;                           //!< destination QP
    uint32_t m_psn;                              //!< next PSN
    DataRate m_rate;                             //!< offered rate (0 = saturate)
    uint64_t m_maxPackets;                       //!< stop after this many (0 = no limit)
    uint32_t m_queueTarget;                      //!< saturating mode: packets kept queued
    uint64_t m_sent;                             //!< packets sent
    bool m_running;                              //!< between start and stop
    bool m_toppingUp{false};                     //!< TopUp is running (not re-entered)
    EventId m_sendEvent;                         //!< rate-mode timer
    Time m_endedAt{Time::Max()};                 //!< see GetEndTime
    Time m_paceOrigin;                           //!< rate mode: when the first packet was sent
    uint64_t m_paced{0};                         //!< rate mode: packets sent since then
    DataRate m_pacedRate;                        //!< rate mode: the DataRate they were paced at
    uint32_t m_pacedWire{0};                     //!< rate mode: their wire size
    TracedCallback<Ptr<const Packet>> m_txTrace; //!< Tx trace
};

} // namespace ns3

#endif /* IB_RAW_TRAFFIC_APPLICATION_H */
