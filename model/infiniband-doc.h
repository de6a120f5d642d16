/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef INFINIBAND_DOC_H
#define INFINIBAND_DOC_H

// Doxygen groups of the infiniband module, one per layer folder of model/. Bottom up; a
// file includes headers of its own folder and of the layers below it only (the test
// LayeringTest.NoFileIncludesAHigherLayer checks every file). doc/infiniband.rst has the table.

/**
 * @defgroup infiniband InfiniBand
 * InfiniBand fabrics at the packet level: IBA wire format, ports and cables with per-VL
 * credits, switches, the subnet manager and its routing engines, the RDMA transport and
 * verbs, IPoIB, collectives, SHARP and training workloads.
 */

/**
 * @defgroup infiniband-common Common utilities
 * @ingroup infiniband
 * Small containers and attribute checks used by every layer (includes nothing of the
 * module).
 */

/**
 * @defgroup infiniband-scheduler Event schedulers
 * @ingroup infiniband
 * The fabric's event schedulers and the prefetch-hint facade the model calls (a no-op
 * under any other ns-3 scheduler).
 */

/**
 * @defgroup infiniband-wire Wire format
 * @ingroup infiniband
 * IBA headers, ICRC and VCRC, packets as bytes, the packet parser and ERF records.
 */

/**
 * @defgroup infiniband-host Host interface
 * @ingroup infiniband
 * The PCI Express link between host and adapter (PcieLink): rates, TLP overheads, DMA
 * and MMIO latencies, which the HCA's host-side stages use.
 */

/**
 * @defgroup infiniband-link Link layer
 * @ingroup infiniband
 * Ports (IbNetDevice), cables (IbChannel, IbRemoteChannel), VL arbitration, link rates,
 * and the interfaces a port's owner implements; Ethernet ports with DCB (EthNetDevice:
 * priority queues, strict priority and ETS, PFC) and their cables (EthChannel).
 */

/**
 * @defgroup infiniband-switch Switch
 * @ingroup infiniband
 * The IbSwitch: input buffers, linear and multicast forwarding tables, SL-to-VL mapping.
 * The EthSwitch: an L3 Ethernet switch for Clos fabrics (IPv4 longest-prefix routes, ECMP
 * with seeded hashes (EthFlowHash), spraying, flowlet and adaptive path selection), a
 * shared-buffer MMU with PFC (dynamic threshold, XOFF/XON, headroom) and ECN marking.
 *
 * PFC headroom. EthSwitch::ComputeHeadroom sizes each (port, lossless priority)'s
 * headroom by the classic rule, 2 x cable delay x rate + 2 x MTU plus the peer's response
 * time, with the switch's forwarding latency and one more MTU frame for a frame partly
 * received. For comparison, the Linux mlx5 driver (kernel commits 0696d608, 5ec983e9)
 * sizes a NIC's receive headroom as xoff = (301 + 2.16 x cable length [m]) x speed
 * [Gb/s] + 2.72 x MTU [bytes], with xoff_threshold = buffer - xoff and xon =
 * xoff_threshold - MTU.
 */

/**
 * @defgroup infiniband-subnet Subnet management
 * @ingroup infiniband
 * Fabric descriptions and builders, the ibnetdiscover reader, LID assignment, the subnet
 * manager, its routing engines (subnet/routing), forwarding-table dumps and deadlock checks.
 */

/**
 * @defgroup infiniband-transport RDMA transport
 * @ingroup infiniband
 * The HCA, queue pairs (RC requester and responder, UD), completion queues, memory
 * regions, verbs types and connection set-up.
 */

/**
 * @defgroup infiniband-flow Flow-level model
 * @ingroup infiniband
 * A fluid network of links shared max-min fairly by flows, for the flow-level transport
 * of the collectives (no packets, credits or pauses).
 */

/**
 * @defgroup infiniband-ipoib IP over InfiniBand
 * @ingroup infiniband
 * IPoIB datagram mode as an ns-3 NetDevice over UD queue pairs.
 */

/**
 * @defgroup infiniband-collectives Collective communication
 * @ingroup infiniband
 * Communicators, collective algorithms, reductions, and the transports they run over.
 */

/**
 * @defgroup infiniband-sharp SHARP
 * @ingroup infiniband
 * In-network aggregation: aggregation nodes in switches, the aggregation manager, and the
 * SHARP collective algorithm.
 */

/**
 * @defgroup infiniband-training Training workloads
 * @ingroup infiniband
 * Data-parallel training jobs and their per-server applications.
 */

/**
 * @defgroup infiniband-apps Applications
 * @ingroup infiniband
 * perftest-style RDMA applications and raw traffic sources.
 */

/**
 * @defgroup infiniband-helper Helpers
 * @ingroup infiniband
 * Helpers that build fabrics and install the model's parts (may use every layer).
 */

#endif // INFINIBAND_DOC_H
