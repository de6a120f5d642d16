/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-memory-region.h"

#include "ib-verbs.h"

#include "ns3/abort.h"
#include "ns3/assert.h"
#include "ns3/log.h"

#include <cstring>
#include <exception>
#include <string>
#include <unistd.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbMemoryRegion");

NS_OBJECT_ENSURE_REGISTERED(IbMemoryRegion);

TypeId
IbMemoryRegion::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IbMemoryRegion")
                            .SetParent<Object>()
                            .SetGroupName("Infiniband")
                            .AddConstructor<IbMemoryRegion>();
    return tid;
}

IbMemoryRegion::IbMemoryRegion()
    : m_addr(0),
      m_length(0),
      m_key(0),
      m_access(0),
      m_dataMode(false)
{
    NS_LOG_FUNCTION(this);
}

IbMemoryRegion::~IbMemoryRegion()
{
    NS_LOG_FUNCTION(this);
}

void
IbMemoryRegion::DoDispose()
{
    std::vector<uint8_t>().swap(m_data);
    m_words.clear();
    Object::DoDispose();
}

void
IbMemoryRegion::Setup(uint64_t addr, uint64_t length, uint32_t key, uint32_t access, bool dataMode)
{
    NS_LOG_FUNCTION(this << addr << length << key << access << dataMode);
    NS_ABORT_MSG_IF(addr + length < addr,
                    "IbMemoryRegion: addr 0x" << std::hex << addr << " + length 0x" << length
                                              << " wraps around the address space");
    m_addr = addr;
    m_length = length;
    m_key = key;
    m_access = access;
    m_dataMode = dataMode;
    if (dataMode)
    {
        const std::string refusal =
            "IbMemoryRegion: cannot hold the " + std::to_string(length) +
            " bytes of a region in DataMode (the HCA's DataMode=true keeps every registered "
            "byte in memory); register a smaller region, or set DataMode=false to simulate "
            "without real bytes";
        // Refused before allocating when the machine's memory could not hold it: an
        // allocation that cannot succeed is not always a catchable bad_alloc (under
        // AddressSanitizer it ends the process).
        const long pages = sysconf(_SC_PHYS_PAGES);
        const long pageSize = sysconf(_SC_PAGESIZE);
        const uint64_t physical =
            pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : UINT64_MAX;
        NS_ABORT_MSG_IF(length > physical,
                        refusal << " (more than this machine's " << physical
                                << " bytes of memory)");
        try
        {
            m_data.assign(length, 0);
        }
        catch (const std::exception&) // bad_alloc, or length_error beyond max_size
        {
            NS_ABORT_MSG(refusal);
        }
    }
}

uint64_t
IbMemoryRegion::GetAddr() const
{
    return m_addr;
}

uint64_t
IbMemoryRegion::GetLength() const
{
    return m_length;
}

uint32_t
IbMemoryRegion::GetLkey() const
{
    return m_key;
}

uint32_t
IbMemoryRegion::GetRkey() const
{
    return m_key;
}

IbSendWr
IbMemoryRegion::WriteTo(const IbMemoryRegion& remote, uint32_t length, uint64_t wrId) const
{
    IbSendWr wr;
    wr.wrId = wrId;
    wr.opcode = IbWrOpcode::RDMA_WRITE;
    wr.sge.addr = GetAddr();
    wr.sge.length = length;
    wr.sge.lkey = GetLkey();
    wr.remoteAddr = remote.GetAddr();
    wr.rkey = remote.GetRkey();
    return wr;
}

uint32_t
IbMemoryRegion::GetAccess() const
{
    return m_access;
}

uint8_t*
IbMemoryRegion::GetData()
{
    return m_dataMode ? m_data.data() : nullptr;
}

const uint8_t*
IbMemoryRegion::GetData() const
{
    return m_dataMode ? m_data.data() : nullptr;
}

uint8_t*
IbMemoryRegion::GetPointer(uint64_t addr)
{
    NS_ASSERT_MSG(addr >= m_addr && addr <= m_addr + m_length, "address outside the region");
    return m_dataMode ? m_data.data() + (addr - m_addr) : nullptr;
}

bool
IbMemoryRegion::Contains(uint64_t addr, uint64_t length) const
{
    return addr >= m_addr && addr <= m_addr + m_length && length <= m_addr + m_length - addr;
}

bool
IbMemoryRegion::HasAccess(uint32_t flags) const
{
    return (m_access & flags) == flags;
}

bool
IbMemoryRegion::CheckLocal(uint64_t addr, uint64_t length, uint32_t lkey, bool needWrite) const
{
    return lkey == m_key && Contains(addr, length) &&
           (!needWrite || HasAccess(IB_ACCESS_LOCAL_WRITE));
}

bool
IbMemoryRegion::CheckRemote(uint64_t addr, uint64_t length, uint32_t rkey, uint32_t flags) const
{
    return rkey == m_key && Contains(addr, length) && HasAccess(flags);
}

uint64_t
IbMemoryRegion::ReadU64(uint64_t addr) const
{
    NS_ASSERT_MSG(Contains(addr, 8), "ReadU64 outside the region");
    if (m_dataMode)
    {
        const uint8_t* p = m_data.data() + (addr - m_addr);
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i)
        {
            v = (v << 8) | p[i];
        }
        return v;
    }
    auto it = m_words.find(addr);
    return it == m_words.end() ? 0 : it->second;
}

void
IbMemoryRegion::WriteU64(uint64_t addr, uint64_t value)
{
    NS_ASSERT_MSG(Contains(addr, 8), "WriteU64 outside the region");
    if (m_dataMode)
    {
        uint8_t* p = m_data.data() + (addr - m_addr);
        for (int i = 0; i < 8; ++i)
        {
            p[i] = static_cast<uint8_t>(value >> (8 * i));
        }
        return;
    }
    m_words[addr] = value;
}

} // namespace ns3
