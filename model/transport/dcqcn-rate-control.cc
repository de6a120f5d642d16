/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "dcqcn-rate-control.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("DcqcnRateControl");

DcqcnRateControl::~DcqcnRateControl()
{
    Stop();
}

void
DcqcnRateControl::Init(const Config* config, double lineBps)
{
    Stop();
    m_cfg = config;
    m_line = lineBps;
    m_rc = lineBps;
    m_rt = lineBps;
    m_alpha = config->initialAlpha;
    m_idle = true;
    m_cnpSinceAlpha = false;
    m_timerEvents = 0;
    m_byteEvents = 0;
    m_bytes = 0;
    m_nextTx = Time();
    m_cutOnce = false;
}

void
DcqcnRateControl::Stop()
{
    m_alphaEvent.Cancel();
    m_increaseEvent.Cancel();
}

void
DcqcnRateControl::ReceiveCnp()
{
    if (m_cfg == nullptr)
    {
        return;
    }
    ++m_cnps;
    const Time now = Simulator::Now();
    m_cnpSinceAlpha = true;
    if (m_cutOnce && now - m_lastCut < m_cfg->rateReducePeriod)
    {
        return; // one cut per period; the CNP still counts for alpha
    }
    if (m_idle)
    {
        // The first CNP after a quiet spell: the estimate starts afresh.
        m_alpha = m_cfg->initialAlpha;
    }
    m_idle = false;
    m_cutOnce = true;
    m_lastCut = now;
    ++m_cuts;
    m_rt = m_rc;
    const double cut = std::min(m_alpha / 2, m_cfg->maxDecrease);
    m_rc = std::max(m_rc * (1 - cut), m_cfg->minRateBps);
    m_alpha = (1 - m_cfg->g) * m_alpha + m_cfg->g;
    m_timerEvents = 0;
    m_byteEvents = 0;
    m_bytes = 0;
    NS_LOG_LOGIC("CNP: Rc " << m_rc << " Rt " << m_rt << " alpha " << m_alpha);
    m_increaseEvent.Cancel();
    m_increaseEvent =
        Simulator::Schedule(m_cfg->increaseTimer, &DcqcnRateControl::IncreaseTimer, this);
    if (m_alphaEvent.IsExpired())
    {
        m_cnpSinceAlpha = false;
        m_alphaEvent = Simulator::Schedule(m_cfg->alphaPeriod, &DcqcnRateControl::AlphaTimer, this);
    }
}

void
DcqcnRateControl::Paced(uint32_t wireBytes)
{
    const Time now = Simulator::Now();
    const Time gap = Seconds(wireBytes * 8.0 / m_rc);
    m_nextTx = std::max(m_nextTx, now) + gap;
    m_bytes += wireBytes;
    if (m_bytes >= m_cfg->byteCounter)
    {
        m_bytes = 0;
        ++m_byteEvents;
        Increase();
    }
}

void
DcqcnRateControl::AlphaTimer()
{
    if (!m_cnpSinceAlpha)
    {
        m_alpha *= 1 - m_cfg->g;
    }
    m_cnpSinceAlpha = false;
    if (!m_idle)
    {
        m_alphaEvent = Simulator::Schedule(m_cfg->alphaPeriod, &DcqcnRateControl::AlphaTimer, this);
    }
}

void
DcqcnRateControl::IncreaseTimer()
{
    ++m_timerEvents;
    Increase();
    if (!m_idle)
    {
        m_increaseEvent =
            Simulator::Schedule(m_cfg->increaseTimer, &DcqcnRateControl::IncreaseTimer, this);
    }
}

void
DcqcnRateControl::Increase()
{
    const uint32_t f = m_cfg->threshold;
    if (std::max(m_timerEvents, m_byteEvents) < f)
    {
        // fast recovery: Rt stays
    }
    else if (std::min(m_timerEvents, m_byteEvents) > f)
    {
        const uint32_t i = std::min(m_timerEvents, m_byteEvents) - f;
        m_rt = std::min(m_line, m_rt + i * m_cfg->hyperBps);
    }
    else
    {
        m_rt = std::min(m_line, m_rt + m_cfg->additiveBps);
    }
    m_rc = std::min(m_line, (m_rt + m_rc) / 2);
    NS_LOG_LOGIC("increase (T " << m_timerEvents << ", B " << m_byteEvents << "): Rc " << m_rc
                                << " Rt " << m_rt);
    MaybeIdle();
}

void
DcqcnRateControl::MaybeIdle()
{
    // Within a millionth of the line rate the pacing gap is below a picosecond a packet: the
    // QP is unlimited again.
    if (m_rc >= m_line * (1 - 1e-6))
    {
        m_rc = m_line;
        m_rt = m_line;
        m_idle = true;
        m_nextTx = Time();
        Stop();
    }
}

} // namespace ns3
