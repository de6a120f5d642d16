/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_HELPER_H
#define IPOIB_HELPER_H

#include "ns3/ib-fabric-helper.h"
#include "ns3/ib-hca-helper.h"
#include "ns3/net-device-container.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

/**
 * @ingroup infiniband
 * @brief Puts IP over InfiniBand (IpoibNetDevice) on every host of an IbFabric, so that
 * InternetStackHelper, Ipv4AddressHelper and any ns-3 IP application can use it.
 *
 * Install() gives each host an IbHca (with DataMode=true) if it has none, one
 * IpoibNetDevice on port 1, and creates the IPoIB broadcast group: multicast LID
 * BroadcastMlid programmed into every switch's MFT by IbMulticastGroup. All IPoIB queue
 * pairs of the fabric get the same QP number (placeholder UD QPs are created on HCAs
 * that already used more QP numbers), because broadcast packets carry it.
 */
class IpoibHelper
{
  public:
    IpoibHelper();

    /**
     * @param name attribute of ns3::IpoibNetDevice
     * @param value its value
     */
    void SetDeviceAttribute(std::string name, const AttributeValue& value);
    /**
     * @param name attribute of ns3::IbHca, for the HCAs Install creates (DataMode is
     *        always true)
     * @param value its value
     */
    void SetHcaAttribute(std::string name, const AttributeValue& value);
    /**
     * @param mlid multicast LID of the broadcast group (default 0xC000)
     */
    void SetBroadcastMlid(uint16_t mlid);

    /**
     * Install IPoIB on every host of @p fabric (its subnet manager must have brought it
     * up).
     * @param fabric the fabric
     * @return the IpoibNetDevices, in the order of fabric.hosts
     */
    NetDeviceContainer Install(const IbFabric& fabric) const;

  private:
    ObjectFactory m_deviceFactory; //!< IpoibNetDevice factory
    IbHcaHelper m_hcaHelper;       //!< HCAs for hosts without one
    uint16_t m_mlid;               //!< broadcast MLID
};

} // namespace ns3

#endif /* IPOIB_HELPER_H */
