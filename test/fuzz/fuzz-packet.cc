/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * libFuzzer target: the packet parser on raw IBA bytes, RoCEv2 frames and ERF records
 * (IbPacketParser, IbErfHeader). The first input byte chooses the form and whether the
 * CRCs are made right first, so that the fuzzer gets past them to the structure checks.
 */

#include "ns3/ib-crc.h"
#include "ns3/ib-erf-header.h"
#include "ns3/ib-packet-parser.h"
#include "ns3/packet.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace
{

/// Make the ICRC and VCRC of an IBA packet right (the last 6 bytes: ICRC 4, VCRC 2).
void
FixCrcs(std::vector<uint8_t>& p)
{
    if (p.size() < 6)
    {
        return;
    }
    const uint32_t n = static_cast<uint32_t>(p.size());
    const uint32_t icrc = ns3::IbCrc::ComputeIcrc(p.data(), n - 6);
    for (int k = 0; k < 4; ++k)
    {
        p[n - 6 + k] = static_cast<uint8_t>(icrc >> (8 * k));
    }
    const uint16_t vcrc = ns3::IbCrc::ComputeVcrc(p.data(), n - 2);
    p[n - 2] = static_cast<uint8_t>(vcrc);
    p[n - 1] = static_cast<uint8_t>(vcrc >> 8);
}

} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
    {
        return 0;
    }
    const uint8_t mode = data[0];
    std::vector<uint8_t> bytes(data + 1, data + size);
    ns3::IbPacketParser parser;
    std::string error;
    switch (mode % 3)
    {
    case 0:
        if (mode & 0x80)
        {
            FixCrcs(bytes);
        }
        parser.Parse(bytes.data(), static_cast<uint32_t>(bytes.size()), &error);
        break;
    case 1:
        parser.ParseRoce(bytes.data(), static_cast<uint32_t>(bytes.size()), &error);
        break;
    default: {
        // An ERF record as a pcap file holds it: the header, then the IBA packet.
        ns3::Ptr<ns3::Packet> p =
            ns3::Create<ns3::Packet>(bytes.data(), static_cast<uint32_t>(bytes.size()));
        ns3::IbErfHeader erf;
        if (p->GetSize() >= erf.GetSerializedSize())
        {
            p->RemoveHeader(erf);
            std::vector<uint8_t> rest(p->GetSize());
            p->CopyData(rest.data(), rest.size());
            parser.Parse(rest.data(), static_cast<uint32_t>(rest.size()), &error);
        }
        break;
    }
    }
    return 0;
}
