/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_NS3_COMPAT_H
#define IB_NS3_COMPAT_H

// The one place where the module's code differs by ns-3 release (3.37 to 3.48). Each
// difference is detected from the API itself, not from a version number (an in-tree build
// need not have version-defines.h), and named here once.

#include "ns3/address.h"
#include "ns3/buffer.h"
#include "ns3/callback.h"
#include "ns3/command-line.h"
#include "ns3/enum.h"

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace ns3
{
namespace ib_compat
{
namespace detail
{

/// Address::Register(kind, length): ns-3 3.44 and later.
template <typename A>
auto
RegisterAddress(const std::string& kind, uint8_t length, int) -> decltype(A::Register(kind, length))
{
    return A::Register(kind, length);
}

/// Address::Register(): ns-3 3.43 and earlier.
template <typename A>
uint8_t
RegisterAddress(const std::string&, uint8_t, long)
{
    return A::Register();
}

/// Whether Address has SetType(kind, length) (ns-3 3.44 and later).
template <typename A, typename = void>
struct HasSetType : std::false_type
{
};

/// See above.
template <typename A>
struct HasSetType<A, std::void_t<decltype(std::declval<A&>().SetType(std::string(), uint8_t()))>>
    : std::true_type
{
};

} // namespace detail

/**
 * @ingroup infiniband-common
 * Whether an Address carries the kind of address it holds (ns-3 3.44 and later), so that a
 * header decoder types it ("MacAddress" of the decoded length) instead of leaving it
 * untyped (type 0, which older releases let every address class of that length accept).
 */
constexpr bool ADDRESSES_HAVE_KINDS = detail::HasSetType<Address>::value;

/**
 * @ingroup infiniband-common
 * Register an address class with ns-3 (Address::Register).
 * @param kind its kind, as header decoders name it ("MacAddress" for hardware addresses);
 *        only newer releases take it
 * @param length its length in bytes; only newer releases take it
 * @return the type number of the class
 */
inline uint8_t
RegisterAddressType(const std::string& kind, uint8_t length)
{
    return detail::RegisterAddress<Address>(kind, length, 0);
}

/**
 * @ingroup infiniband-common
 * An address as ns-3's header decoders (ArpHeader, Icmpv6 options) return one read from
 * the wire: untyped on older releases, typed by @p kind and @p length on newer ones.
 * @param kind the kind the decoder gives it ("MacAddress")
 * @param bytes the address bytes
 * @param length their number
 * @return the address
 */
template <typename A = Address>
A
DecodedAddress(const std::string& kind, const uint8_t* bytes, uint8_t length)
{
    A a;
    if constexpr (detail::HasSetType<A>::value)
    {
        a.SetType(kind, length);
    }
    a.CopyFrom(bytes, length);
    return a;
}

namespace detail
{

/// MakeEnumAccessor<E>(...): ns-3 3.40 and later take the enum type first.
template <typename E, typename... A>
auto
EnumAccessor(int, A... a) -> decltype(ns3::MakeEnumAccessor<E>(a...))
{
    return ns3::MakeEnumAccessor<E>(a...);
}

/// MakeEnumAccessor(...): ns-3 3.37 has no enum type argument.
template <typename E, typename... A>
auto
EnumAccessor(long, A... a) -> decltype(ns3::MakeEnumAccessor(a...))
{
    return ns3::MakeEnumAccessor(a...);
}

} // namespace detail

/**
 * The accessor of an enum attribute, whichever form of MakeEnumAccessor the installed ns-3
 * has: from 3.40 on it takes the enum type as its first template argument, before (3.37) it
 * takes none. The form that does not compile drops out of overload resolution.
 * @tparam E the enum type
 * @param a a member pointer, or a setter and a getter
 * @return the accessor
 */
template <typename E, typename... A>
auto
MakeEnumAccessor(A... a)
{
    return detail::EnumAccessor<E>(0, a...);
}

namespace detail
{

/// Whether CommandLine::AddValue takes a Callback<bool, const std::string&> (ns-3 3.38 and
/// later): the exact member signature, since 3.37's Callback<bool, std::string> would also
/// accept such a callback through its conversion from CallbackBase (a wrong cast).
template <typename C, typename = void>
struct TakesConstRefCallback : std::false_type
{
};

/// See above.
template <typename C>
struct TakesConstRefCallback<
    C,
    std::void_t<decltype(static_cast<void (C::*)(const std::string&,
                                                 const std::string&,
                                                 Callback<bool, const std::string&>,
                                                 const std::string&)>(&C::AddValue))>>
    : std::true_type
{
};

/// CommandLine::AddValue with a Callback<bool, const std::string&>: ns-3 3.38 and later.
template <typename C>
auto
AddCommandLineCallback(C& cmd,
                       const std::string& name,
                       const std::string& help,
                       const std::function<bool(const std::string&)>& parse,
                       const std::string& defaultValue,
                       int) -> std::enable_if_t<TakesConstRefCallback<C>::value>
{
    cmd.AddValue(name,
                 help,
                 Callback<bool, const std::string&>(
                     [parse](const std::string& text) { return parse(text); }),
                 defaultValue);
}

/// CommandLine::AddValue with a Callback<bool, std::string>: ns-3 3.37.
template <typename C>
auto
AddCommandLineCallback(C& cmd,
                       const std::string& name,
                       const std::string& help,
                       const std::function<bool(const std::string&)>& parse,
                       const std::string& defaultValue,
                       long) -> std::enable_if_t<!TakesConstRefCallback<C>::value>
{
    cmd.AddValue(name,
                 help,
                 Callback<bool, std::string>([parse](std::string text) { return parse(text); }),
                 defaultValue);
}

} // namespace detail

/**
 * @ingroup infiniband-common
 * Register a command-line option parsed by a function of the module's, whichever callback
 * type the installed ns-3's CommandLine takes (std::string by value in 3.37, by const
 * reference from 3.38 on).
 * @param cmd the command line
 * @param name the option's name
 * @param help its help text
 * @param parse called with the text the user gave; returns false to refuse it
 * @param defaultValue the default shown in the help
 */
inline void
AddCommandLineOption(CommandLine& cmd,
                     const std::string& name,
                     const std::string& help,
                     const std::function<bool(const std::string&)>& parse,
                     const std::string& defaultValue)
{
    detail::AddCommandLineCallback(cmd, name, help, parse, defaultValue, 0);
}

/**
 * @defgroup ib-compat-le Little-endian fields
 * The CRCs of IBA and RoCE packets go on the wire least significant byte first. ns-3 3.48
 * deprecates Buffer::Iterator's WriteHtolsbU16/U32 and ReadLsbtohU16/U32, which earlier
 * releases have and later ones may drop; byte by byte, the same bytes on every release.
 * @{
 */

/**
 * @param i where to write (advanced by 2)
 * @param v the value
 */
inline void
WriteLe16(Buffer::Iterator& i, uint16_t v)
{
    i.WriteU8(static_cast<uint8_t>(v));
    i.WriteU8(static_cast<uint8_t>(v >> 8));
}

/**
 * @param i where to write (advanced by 4)
 * @param v the value
 */
inline void
WriteLe32(Buffer::Iterator& i, uint32_t v)
{
    WriteLe16(i, static_cast<uint16_t>(v));
    WriteLe16(i, static_cast<uint16_t>(v >> 16));
}

/**
 * @param i where to read (advanced by 2)
 * @return the value
 */
inline uint16_t
ReadLe16(Buffer::Iterator& i)
{
    const uint16_t lo = i.ReadU8();
    return static_cast<uint16_t>(lo | (i.ReadU8() << 8));
}

/**
 * @param i where to read (advanced by 4)
 * @return the value
 */
inline uint32_t
ReadLe32(Buffer::Iterator& i)
{
    const uint32_t lo = ReadLe16(i);
    return lo | (static_cast<uint32_t>(ReadLe16(i)) << 16);
}

/** @} */

} // namespace ib_compat
} // namespace ns3

#endif // IB_NS3_COMPAT_H
