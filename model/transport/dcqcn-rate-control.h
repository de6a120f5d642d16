/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef DCQCN_RATE_CONTROL_H
#define DCQCN_RATE_CONTROL_H

#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief The DCQCN reaction point of one queue pair on a RoCE port (Zhu et al., "Congestion
 * Control for Large-Scale RDMA Deployments", SIGCOMM 2015): the rate state machine that a
 * congestion notification packet (CNP) cuts and timers and a byte counter raise again.
 *
 * State: the current rate Rc, the target rate Rt and the congestion estimate alpha. On a CNP
 * (at most one cut per RateReducePeriod): Rt = Rc, Rc = Rc (1 - alpha / 2) (but never below
 * Rc x (1 - MaxDecrease) nor MinRate), alpha = (1 - g) alpha + g, and the increase counters
 * restart. Every AlphaPeriod without a CNP alpha = (1 - g) alpha. A rate-increase event comes
 * from the timer (every IncreaseTimer) or the byte counter (every ByteCounter bytes sent); with
 * T and B the events counted since the last cut: while max(T, B) < F the rate recovers quickly
 * (Rc = (Rt + Rc) / 2); once both exceed F, hyper increase (Rt += i x HyperIncrease, i = min(T,
 * B) - F); otherwise additive increase (Rt += AdditiveIncrease, then Rc = (Rt + Rc) / 2). Rates
 * never exceed the line rate; at the line rate with nothing left to recover, the state goes
 * idle and schedules no events.
 *
 * The queue pair paces its requests at Rc (NextTransmitTime()); at the line rate it is not
 * paced at all.
 */
class DcqcnRateControl
{
  public:
    /// The parameters (IbHca attributes Dcqcn*).
    struct Config
    {
        double g{1.0 / 256};      ///< alpha gain
        double initialAlpha{1.0}; ///< alpha at the first cut
        Time alphaPeriod;         ///< alpha decay period without CNPs
        Time increaseTimer;       ///< rate-increase timer period
        uint64_t byteCounter{0};  ///< bytes per rate-increase event
        uint32_t threshold{1};    ///< F: fast-recovery events
        double additiveBps{0};    ///< additive increase, bit/s
        double hyperBps{0};       ///< hyper increase step, bit/s
        double minRateBps{0};     ///< lowest rate, bit/s
        double maxDecrease{0.5};  ///< largest fraction one cut takes off
        Time rateReducePeriod;    ///< least time between two cuts
    };

    DcqcnRateControl() = default;
    ~DcqcnRateControl();

    DcqcnRateControl(const DcqcnRateControl&) = delete;
    DcqcnRateControl& operator=(const DcqcnRateControl&) = delete;

    /**
     * Start at the line rate.
     * @param config the parameters (must outlive this object)
     * @param lineBps the port's rate, bit/s
     */
    void Init(const Config* config, double lineBps);

    /// A CNP arrived for the queue pair.
    void ReceiveCnp();

    /**
     * The queue pair put a request packet on the port.
     * @param wireBytes the packet's size on the wire (frame, preamble and inter-frame gap)
     */
    void NotifySent(uint32_t wireBytes)
    {
        if (m_idle)
        {
            return;
        }
        Paced(wireBytes);
    }

    /// @return the earliest time the next request packet may leave (zero when not paced)
    Time NextTransmitTime() const
    {
        return m_nextTx;
    }

    /// @return the current rate Rc, bit/s
    double GetRate() const
    {
        return m_rc;
    }

    /// @return the target rate Rt, bit/s
    double GetTargetRate() const
    {
        return m_rt;
    }

    /// @return alpha
    double GetAlpha() const
    {
        return m_alpha;
    }

    /// @return CNPs received
    uint64_t GetCnps() const
    {
        return m_cnps;
    }

    /// @return rate cuts made
    uint64_t GetCuts() const
    {
        return m_cuts;
    }

    /// Stop the timers (the queue pair is reset or destroyed).
    void Stop();

  private:
    /// The slow part of NotifySent: pacing and the byte counter.
    /// @param wireBytes the packet's size on the wire
    void Paced(uint32_t wireBytes);
    /// The alpha timer fired.
    void AlphaTimer();
    /// The rate-increase timer fired.
    void IncreaseTimer();
    /// One rate-increase event (timer or byte counter).
    void Increase();
    /// Back at the line rate: stop the timers and pacing.
    void MaybeIdle();

    const Config* m_cfg{nullptr}; //!< parameters
    double m_line{0};             //!< line rate, bit/s
    double m_rc{0};               //!< current rate
    double m_rt{0};               //!< target rate
    double m_alpha{1};            //!< congestion estimate
    bool m_idle{true};            //!< at the line rate, no timers
    bool m_cnpSinceAlpha{false};  //!< a CNP arrived in this alpha period
    uint32_t m_timerEvents{0};    //!< T
    uint32_t m_byteEvents{0};     //!< B
    uint64_t m_bytes{0};          //!< bytes toward the next byte-counter event
    Time m_nextTx;                //!< pacing
    Time m_lastCut;               //!< time of the last cut
    bool m_cutOnce{false};        //!< a cut happened (m_lastCut valid)
    uint64_t m_cnps{0};           //!< CNPs received
    uint64_t m_cuts{0};           //!< cuts made
    EventId m_alphaEvent;         //!< alpha timer
    EventId m_increaseEvent;      //!< rate-increase timer
};

} // namespace ns3

#endif /* DCQCN_RATE_CONTROL_H */
