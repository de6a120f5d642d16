/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-tx-start-listener.h"

#include "ib-net-device.h"

namespace ns3
{

IbTxStartListener::~IbTxStartListener()
{
    if (m_txStartPort != nullptr)
    {
        m_txStartPort->RemoveTxStartListener(this);
    }
}

} // namespace ns3
