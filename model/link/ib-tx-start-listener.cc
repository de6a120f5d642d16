/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-tx-start-listener.h"

#include "ib-net-device.h"

#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbTxStartListener");

IbTxStartListener::~IbTxStartListener()
{
    if (m_txStartPort != nullptr)
    {
        m_txStartPort->RemoveTxStartListener(this);
    }
}

} // namespace ns3
