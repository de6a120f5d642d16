/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PREFETCH_H
#define IB_PREFETCH_H

#include "ns3/abort.h"

#include <atomic>
#include <cstdint>

namespace ns3
{

/**
 * @ingroup infiniband-scheduler
 * @brief The one place through which the model gives cache-prefetch hints: what the handler
 * of the event it is about to schedule will read first.
 *
 * Events run one after another, each waiting for the memory it reads; on a large fabric
 * most of that memory (the receiving port, the input port whose buffer a transmission
 * releases) is no longer in the cache. Just before Simulator::Schedule, the model names up
 * to two pieces of memory (Hint, then Also), each a run of up to 63 cache lines plus one
 * more line of the same object up to 4 MB further on. The scheduler that runs the event
 * may prefetch them when the event becomes the next one, so that they load while the
 * current event runs: IbTimingWheelScheduler does (TakeHints at Insert); every other ns-3
 * scheduler never reads them, so a hint then costs two stores. A hint never changes a
 * result: a prefetch never faults, and a stale or wrong one costs memory bandwidth only.
 *
 * Now() prefetches at once, for memory the current handler reads a little later.
 */
class IbPrefetch
{
  public:
    /// Bytes in a cache line, as the hints count them.
    static constexpr uint32_t LINE = 64;

    /**
     * @param bytes a number of bytes from the start of a line-aligned object
     * @return the cache lines they span
     */
    static constexpr uint32_t LinesFor(uint64_t bytes)
    {
        return static_cast<uint32_t>((bytes + LINE - 1) / LINE);
    }

    /**
     * Name the memory the handler of the next event scheduled reads first (and drop an
     * Also made before it).
     * @param address the first byte
     * @param lines how many cache lines from the one holding @p address (at most 63)
     * @param also one more line to fetch, in the same object further on (a per-VL member,
     *        say), or null; dropped unless it is 1 to 65,535 lines after the line holding
     *        @p address (so within 4 MB)
     */
    static void Hint(const void* address, uint32_t lines, const void* also = nullptr)
    {
        s_hint.store(Encode(address, lines, also), std::memory_order_relaxed);
        s_hint2.store(0, std::memory_order_relaxed);
    }

    /**
     * Name a second piece of memory for the same event, after Hint: one the handler
     * reaches through the first (the input port whose buffer a transmission releases).
     * @param address the first byte
     * @param lines how many cache lines from the one holding @p address (at most 63)
     * @param also one more line, as for Hint, or null
     */
    static void Also(const void* address, uint32_t lines, const void* also = nullptr)
    {
        s_hint2.store(Encode(address, lines, also), std::memory_order_relaxed);
    }

    /**
     * Prefetch the line holding @p address now.
     * @param address an address (any: a prefetch never faults)
     */
    static void Now(const void* address)
    {
        __builtin_prefetch(address);
    }

    /**
     * For a scheduler: the hints named for the event being inserted, which are then
     * cleared (a hint belongs to one event).
     * @param hint the Hint (Encode), or 0
     * @param hint2 the Also (Encode), or 0
     */
    static void TakeHints(uint64_t& hint, uint64_t& hint2)
    {
        hint = s_hint.load(std::memory_order_relaxed);
        hint2 = s_hint2.load(std::memory_order_relaxed);
        s_hint.store(0, std::memory_order_relaxed);
        s_hint2.store(0, std::memory_order_relaxed);
    }

    /**
     * For a scheduler: prefetch what a hint names.
     * @param hint a hint (Encode), or 0
     */
    static void Fetch(uint64_t hint)
    {
        const uint64_t line = FirstLine(hint);
        for (uint64_t i = 0; i < LineCount(hint); ++i)
        {
            __builtin_prefetch(reinterpret_cast<const void*>(line + LINE * i));
        }
        if (const uint64_t extra = ExtraLine(hint); extra != 0)
        {
            __builtin_prefetch(reinterpret_cast<const void*>(extra));
        }
    }

    /**
     * A hint as a scheduler stores it with an event: the line address in bits 6 to 47
     * (higher bits of @p address are dropped: user-space addresses on today's x86-64 and
     * AArch64 systems are below 2^48 unless a program asks for more, and a wrong hint costs
     * a useless prefetch at worst), the line count in bits 0 to 5 and the extra line's
     * distance in lines from the first in bits 48 to 63 (0: none).
     * @param address the first byte
     * @param lines cache lines from the one holding it (at most 63)
     * @param also the extra line, or null
     * @return the encoded hint
     */
    static uint64_t Encode(const void* address, uint32_t lines, const void* also)
    {
        NS_ABORT_MSG_IF(lines > 63, "IbPrefetch::Hint/Also: " << lines << " lines; at most 63");
        const uint64_t line = reinterpret_cast<uintptr_t>(address) & LINE_BITS;
        if (also == nullptr)
        {
            return line | lines;
        }
        // Before the first line or 4 MB or more after it: a distance of 2^16 lines or more
        // (unsigned), left out.
        const uint64_t far = (reinterpret_cast<uintptr_t>(also) - line) / LINE;
        return line | lines | (far < 0x10000 ? far << 48 : 0);
    }

    /**
     * @param hint a hint (Encode)
     * @return the address of its first line
     */
    static uint64_t FirstLine(uint64_t hint)
    {
        return hint & LINE_BITS;
    }

    /**
     * @param hint a hint (Encode)
     * @return the number of lines from its first
     */
    static uint32_t LineCount(uint64_t hint)
    {
        return static_cast<uint32_t>(hint & 63);
    }

    /**
     * @param hint a hint (Encode)
     * @return the address of its extra line, or 0 if it has none
     */
    static uint64_t ExtraLine(uint64_t hint)
    {
        return (hint >> 48) != 0 ? FirstLine(hint) + LINE * (hint >> 48) : 0;
    }

  private:
    /// The bits of a hint that hold the line address.
    static constexpr uint64_t LINE_BITS = 0x0000FFFFFFFFFFC0;

    /// The hint for the next event scheduled. Atomic because the real-time simulator
    /// schedules from other threads too; relaxed: a hint on the wrong event changes no result.
    static inline std::atomic<uint64_t> s_hint{0};
    /// The second hint for the next event scheduled, or 0.
    static inline std::atomic<uint64_t> s_hint2{0};
};

} // namespace ns3

#endif // IB_PREFETCH_H
