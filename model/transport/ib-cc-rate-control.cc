/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-cc-rate-control.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbCcRateControl");

IbCcRateControl::~IbCcRateControl()
{
    Stop();
}

void
IbCcRateControl::Init(const IbCaCongestionSetting* setting, double lineBps)
{
    Stop();
    m_cfg = setting;
    m_line = lineBps;
    m_nextTx = Time();
    m_ccti = 0;
    m_factor = 0;
    if (m_cfg != nullptr)
    {
        // The starting index is no change: no callback.
        m_ccti = std::min(m_cfg->cctiMin, m_cfg->GetCctiLimit());
        m_factor = FactorOf(m_ccti);
    }
}

void
IbCcRateControl::SetCctiCallback(CctiCallback cb)
{
    m_cctiCb = cb;
}

void
IbCcRateControl::Stop()
{
    m_timer.Cancel();
    m_timerOn = false;
    m_cfg = nullptr;
    m_factor = 0;
}

void
IbCcRateControl::SetCcti(uint16_t ccti)
{
    const uint16_t old = m_ccti;
    m_ccti = ccti;
    m_factor = FactorOf(ccti);
    if (old != ccti && !m_cctiCb.IsNull())
    {
        m_cctiCb(old, ccti);
    }
}

double
IbCcRateControl::FactorOf(uint16_t ccti) const
{
    return m_cfg->cct.empty() ? 0.0 : IbCaCongestionSetting::DelayFactor(m_cfg->cct[ccti]);
}

double
IbCcRateControl::GetRate() const
{
    return m_line / (1.0 + m_factor);
}

void
IbCcRateControl::ReceiveBecn()
{
    if (m_cfg == nullptr)
    {
        return;
    }
    ++m_becns;
    const uint32_t raised = static_cast<uint32_t>(m_ccti) + m_cfg->cctiIncrease;
    SetCcti(static_cast<uint16_t>(std::min<uint32_t>(raised, m_cfg->GetCctiLimit())));
    NS_LOG_LOGIC("BECN: CCTI " << m_ccti);
    if (!m_timerOn && m_cfg->cctiTimer.IsStrictlyPositive() && m_ccti > m_cfg->cctiMin)
    {
        m_timerOn = true;
        m_timer = Simulator::Schedule(m_cfg->cctiTimer, &IbCcRateControl::Timer, this);
    }
}

void
IbCcRateControl::Timer()
{
    m_timerOn = false;
    if (m_ccti > m_cfg->cctiMin)
    {
        SetCcti(static_cast<uint16_t>(m_ccti - 1));
    }
    if (m_ccti > m_cfg->cctiMin)
    {
        m_timerOn = true;
        m_timer = Simulator::Schedule(m_cfg->cctiTimer, &IbCcRateControl::Timer, this);
    }
}

void
IbCcRateControl::Paced(uint32_t wireBytes)
{
    const Time now = Simulator::Now();
    // The packet's own wire time plus the table's delay after it.
    const Time gap = Seconds(wireBytes * 8.0 * (1.0 + m_factor) / m_line);
    m_nextTx = std::max(m_nextTx, now) + gap;
}

} // namespace ns3
