/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IPOIB_HELPER_H
#define IPOIB_HELPER_H

#include "ib-fabric-helper.h"
#include "ib-hca-helper.h"

#include "ns3/ipv6-address-helper.h"
#include "ns3/ipv6-interface-container.h"
#include "ns3/net-device-container.h"
#include "ns3/object-factory.h"

#include <memory>
#include <string>
#include <vector>

namespace ns3
{

class IpoibNetDevice;

/**
 * @ingroup infiniband-helper
 * @brief Puts IP over InfiniBand (IpoibNetDevice) on every host of an IbFabric, so that
 * InternetStackHelper, Ipv4AddressHelper and any ns-3 IP application can use it.
 *
 * Install() gives each host an IbHca (with DataMode=true) if it has none, one
 * IpoibNetDevice on port 1, and creates the IPoIB broadcast group: multicast LID
 * BroadcastMlid programmed into every switch's MFT by IbMulticastGroup. All IPoIB queue
 * pairs of the fabric get the same QP number (placeholder UD QPs are created on HCAs
 * that already used more QP numbers), because broadcast packets carry it, and in Eui64
 * mode unicast packets too.
 *
 * The hardware address mode is an attribute of the devices:
 * SetDeviceAttribute("HardwareAddressMode", EnumValue(IpoibNetDevice::EUI64)) gives IPv6
 * neighbour discovery and ARP with 8-byte addresses on any ns-3 build (see
 * IpoibNetDevice).
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

    /**
     * IPv6 on IPoIB devices in Ipoib20 mode (IpoibNetDevice's HardwareAddressMode), with
     * ns-3 3.37 (use instead of Ipv6AddressHelper::Assign). In Eui64 mode none of this is
     * needed: Ipv6AddressHelper::Assign works as on any device, with neighbour discovery
     * and DAD, and this function just calls it.
     *
     * 1. Assigns addresses with @p ipv6 (its network, prefix 64), while the devices present
     *    their RFC 4391 interface identifier (IpoibNetDevice::SetPresentInterfaceId): the
     *    link-local address is fe80::<id> and the global one <network>::<id>, where <id> is
     *    the port GUID with the universal/local bit inverted.
     * 2. Fills every device's neighbour cache with the addresses (link-local and global)
     *    the other devices of @p devices have at that point, mapped to their 20-byte IPoIB
     *    addresses, as permanent entries (n (n - 1) x 2 entries for n devices), again after
     *    every link change of the device's port (ns-3 flushes neighbour caches then, and
     *    the IB links come up at the start of the simulation), and turns off duplicate
     *    address detection (Icmpv6L4Protocol's DAD attribute) on the devices' nodes.
     *
     * Neighbour discovery messages with a link-layer address option must not cross the
     * IPoIB link: ns-3 3.37 deserializes the option of a 20-byte address as a 22-byte
     * Address, beyond Address::MAX_SIZE (20), and overwrites memory (see the IPoIB
     * limitations in the model documentation). The permanent entries make address
     * resolution, unreachability detection and DAD unnecessary. The Router Solicitations
     * ns-3 hosts send do reach every host, but only an interface that forwards (a router)
     * accepts them: no IPv6 router may sit on the IPoIB subnet.
     *
     * @param ipv6 the address helper (network and prefix)
     * @param devices IpoibNetDevices on nodes with the Internet stack (InternetStackHelper)
     * @return their IPv6 interfaces
     */
    static Ipv6InterfaceContainer AssignIpv6(Ipv6AddressHelper& ipv6,
                                             const NetDeviceContainer& devices);

  private:
    /**
     * Put every other device's IPv6 addresses into @p dev's neighbour cache, as permanent
     * entries with their 20-byte IPoIB addresses.
     * @param dev an IpoibNetDevice with IPv6
     * @param peers the devices of the subnet (raw pointers: the callback bound to the
     *        devices' link changes must not keep them alive)
     */
    static void AddIpv6Neighbours(IpoibNetDevice* dev,
                                  std::shared_ptr<std::vector<IpoibNetDevice*>> peers);

    ObjectFactory m_deviceFactory; //!< IpoibNetDevice factory
    IbHcaHelper m_hcaHelper;       //!< HCAs for hosts without one
    uint16_t m_mlid;               //!< broadcast MLID
};

} // namespace ns3

#endif /* IPOIB_HELPER_H */
