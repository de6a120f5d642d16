/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_CC_RATE_CONTROL_H
#define IB_CC_RATE_CONTROL_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ib-ca-congestion-setting.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief The reaction point of IBA congestion control (annex A10) for one queue pair, or for
 * one SL of a port: the Congestion Control Table Index (CCTI) that BECNs raise and a timer
 * lowers, and the inter-packet delay its table entry sets.
 *
 * A BECN adds CctiIncrease to the CCTI, capped at CCTI_Limit, and starts the CCTI timer if
 * it is not running; the timer is periodic (CctiTimer): each expiry lowers the CCTI by one
 * while it is above CctiMin, and it stops once the CCTI is back at CctiMin. A BECN does not
 * restart a running timer (the Linux hfi1 driver's process_becn and CCA timer do the same).
 * The CCTI starts at CctiMin.
 *
 * Pacing: after each packet of wire time t, the next may start no earlier than t x (1 +
 * DelayFactor(CCT[CCTI])) after this one started; with a zero entry, nothing is paced.
 */
class IbCcRateControl
{
  public:
    IbCcRateControl() = default;
    ~IbCcRateControl();

    IbCcRateControl(const IbCcRateControl&) = delete;
    IbCcRateControl& operator=(const IbCcRateControl&) = delete;

    /// Called with (old CCTI, new CCTI) when the index changes.
    typedef Callback<void, uint16_t, uint16_t> CctiCallback;

    /**
     * Start (again) at CctiMin.
     * @param setting the port's setting (must outlive this object, or the next Init/Stop)
     * @param lineBps the port's rate, bit/s
     */
    void Init(const IbCaCongestionSetting* setting, double lineBps);

    /// @param cb called on every CCTI change
    void SetCctiCallback(CctiCallback cb);

    /// A BECN arrived (in a CNP, or set in the BTH of any packet).
    void ReceiveBecn();

    /**
     * A packet left for the wire.
     * @param wireBytes its size on the wire
     */
    void NotifySent(uint32_t wireBytes)
    {
        if (m_factor == 0.0)
        {
            return;
        }
        Paced(wireBytes);
    }

    /// @return the earliest time the next packet may leave (zero when not paced)
    Time NextTransmitTime() const
    {
        return m_nextTx;
    }

    /// @return the current CCTI
    uint16_t GetCcti() const
    {
        return m_ccti;
    }

    /// @return the rate the current entry allows, bit/s
    double GetRate() const;

    /// @return BECNs received
    uint64_t GetBecns() const
    {
        return m_becns;
    }

    /// @return true once Init ran (and Stop did not since)
    bool IsActive() const
    {
        return m_cfg != nullptr;
    }

    /// Stop the timer and pacing (the queue pair is reset or destroyed).
    void Stop();

  private:
    /// The slow part of NotifySent.
    /// @param wireBytes the packet's size on the wire
    void Paced(uint32_t wireBytes);
    /// The CCTI timer expired.
    void Timer();
    /// @param ccti the new index: take it and its entry's delay
    void SetCcti(uint16_t ccti);
    /// @param ccti an index of the table
    /// @return its entry's delay factor (0 for an empty table)
    double FactorOf(uint16_t ccti) const;

    const IbCaCongestionSetting* m_cfg{nullptr}; //!< the setting
    double m_line{0};                            //!< line rate, bit/s
    uint16_t m_ccti{0};                          //!< the index
    double m_factor{0};                          //!< DelayFactor of CCT[m_ccti]
    Time m_nextTx;                               //!< pacing
    uint64_t m_becns{0};                         //!< BECNs received
    EventId m_timer;                             //!< CCTI timer
    bool m_timerOn{false};                       //!< m_timer is scheduled
    CctiCallback m_cctiCb;                       //!< CCTI changes
};

} // namespace ns3

#endif /* IB_CC_RATE_CONTROL_H */
