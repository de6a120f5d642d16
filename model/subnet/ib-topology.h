/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TOPOLOGY_H
#define IB_TOPOLOGY_H

#include "ns3/ib-link-rate.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-subnet
 * @brief A fabric as the subnet manager sees it: switches, channel adapters (HCAs),
 * their numbered ports, and the cables between them.
 *
 * This is a plain description, independent of ns-3 objects. Topology builders (fat
 * trees, ibnetdiscover import) produce one; routing engines read one; IbFabricHelper
 * turns one into ns-3 nodes, ports and cables. Because every MPI rank can build the same
 * description, every rank computes the same LIDs and routes.
 *
 * Ports are numbered as in IBA: switch ports 1..N (port 0 is the switch's management
 * port and has no cable), channel-adapter ports 1..N. Node indices are positions in
 * GetNodes() and never change once a node is added.
 */
class IbTopology
{
  public:
    /// Node kind.
    enum NodeType : uint8_t
    {
        SWITCH = 0, ///< a switch
        CA = 1      ///< a channel adapter (HCA) on a host
    };

    /// One port end of a cable.
    struct Port
    {
        int32_t peerNode{-1};                     ///< node at the other end, -1 = no cable
        uint8_t peerPort{0};                      ///< port number at the other end
        IbLinkRate::Speed speed{IbLinkRate::EDR}; ///< link speed of the cable
        uint8_t width{4};                         ///< link width of the cable
    };

    /// One switch or channel adapter.
    struct Node
    {
        NodeType type{CA};       ///< kind
        std::string name;        ///< node description, e.g. "r-dcs96 HCA-2"
        uint64_t guid{0};        ///< node GUID (unique; generated if not given)
        std::vector<Port> ports; ///< index = port number; index 0 unused for CAs
        int32_t level{-1};       ///< tree level if known (0 = leaf switches), else -1
    };

    IbTopology();

    /**
     * @param numPorts number of external ports (1..254)
     * @param name node description
     * @param guid node GUID (0 = generate one)
     * @return the new node's index
     */
    uint32_t AddSwitch(uint32_t numPorts, const std::string& name = "", uint64_t guid = 0);
    /**
     * @param numPorts number of ports (usually 1 or 2)
     * @param name node description
     * @param guid node GUID (0 = generate one)
     * @return the new node's index
     */
    uint32_t AddCa(uint32_t numPorts = 1, const std::string& name = "", uint64_t guid = 0);

    /**
     * Cable port @p portA of node @p a to port @p portB of node @p b.
     * @param a node index
     * @param portA port number on a
     * @param b node index
     * @param portB port number on b
     * @param speed link speed
     * @param width link width
     * @param [out] error what is wrong, if the ports do not exist or are already cabled
     * @return true on success
     */
    bool Connect(uint32_t a,
                 uint8_t portA,
                 uint32_t b,
                 uint8_t portB,
                 IbLinkRate::Speed speed,
                 uint8_t width,
                 std::string* error = nullptr);

    /**
     * Cable the lowest free ports of @p a and @p b. Aborts with a message naming the
     * nodes if either has no free port.
     * @param a node index
     * @param b node index
     * @param speed link speed
     * @param width link width
     */
    void ConnectNextFree(uint32_t a,
                         uint32_t b,
                         IbLinkRate::Speed speed = IbLinkRate::EDR,
                         uint8_t width = 4);

    /// @return all nodes
    const std::vector<Node>& GetNodes() const;
    /**
     * @param i node index
     * @return node i
     */
    const Node& GetNode(uint32_t i) const;
    /**
     * @param i node index
     * @return node i, for builders that set levels or names
     */
    Node& GetNodeMutable(uint32_t i);
    /// @return number of nodes
    uint32_t GetNNodes() const;
    /// @return indices of all switches, in index order
    std::vector<uint32_t> GetSwitches() const;
    /// @return indices of all channel adapters, in index order
    std::vector<uint32_t> GetCas() const;
    /// @return number of cables
    uint32_t GetNLinks() const;
    /**
     * @param guid a node GUID
     * @return the node's index, or -1
     */
    int32_t FindByGuid(uint64_t guid) const;

    /**
     * Check the description is usable: every cable is symmetric, and the fabric is one
     * connected component with at least one CA (with SetSeparateSubnets: every
     * component has a switch and a CA).
     * @param [out] error what is wrong
     * @return true if valid
     */
    bool Validate(std::string* error) const;

    /**
     * Mean the fabric to be several subnets, one per connected component, that nothing
     * joins (the rails of a rail-only cluster): Validate accepts several components, the
     * subnet manager routes each on its own and the Ethernet fabric helper routes within
     * each. Default false: a fabric in pieces is a cabling mistake.
     * @param separate true for one subnet per component
     */
    void SetSeparateSubnets(bool separate);
    /// @return whether the fabric is meant as one subnet per connected component
    bool HasSeparateSubnets() const;
    /**
     * @param [out] count the number of connected components
     * @return each node's component, numbered in the order of their lowest node index
     */
    std::vector<uint32_t> GetComponents(uint32_t* count = nullptr) const;

  private:
    std::vector<Node> m_nodes;     //!< all nodes
    uint32_t m_links;              //!< number of cables
    bool m_separateSubnets{false}; //!< SetSeparateSubnets
    uint64_t m_nextGuid;           //!< next generated GUID
};

} // namespace ns3

#endif /* IB_TOPOLOGY_H */
