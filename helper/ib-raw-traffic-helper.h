/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_RAW_TRAFFIC_HELPER_H
#define IB_RAW_TRAFFIC_HELPER_H

#include "ns3/application-container.h"
#include "ns3/object-factory.h"

namespace ns3
{

class IbNetDevice;
class Node;

/**
 * @ingroup infiniband-helper
 * @brief Installs IbRawTrafficApplication on ports.
 */
class IbRawTrafficHelper
{
  public:
    /**
     * @param dlid the destination LID
     */
    explicit IbRawTrafficHelper(uint16_t dlid);

    /**
     * @param name attribute of ns3::IbRawTrafficApplication
     * @param value its value
     */
    void SetAttribute(std::string name, const AttributeValue& value);

    /**
     * @param device the sending port (the application goes on its node)
     * @return the application
     */
    ApplicationContainer Install(Ptr<IbNetDevice> device) const;

  private:
    ObjectFactory m_factory; //!< application factory
};

} // namespace ns3

#endif /* IB_RAW_TRAFFIC_HELPER_H */
