/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_EXAMPLE_OPTIONS_H
#define IB_EXAMPLE_OPTIONS_H

#include "ns3/command-line.h"
#include "ns3/ib-ns3-compat.h"

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief What the module's programs share to answer bad command-line input: strict
 * parsing of numeric options and a clean exit with a message.
 *
 * ns-3's CommandLine reads an unsigned option with an input stream, which takes "-1" as
 * 4294967295 and "4e9" as 4; Add registers such an option so that anything but a whole
 * number in the type's range stops the program with "--name=value: ..." and exit status
 * 1. Other types go to CommandLine::AddValue unchanged. Fail (and IB_REQUIRE, IB_REFUSE)
 * print "error: ..." and exit with status 1, without an abort trace: the programs use
 * them for every check of what the user typed.
 */
class IbOptions
{
  public:
    /**
     * Register an option. Unsigned integers are parsed strictly (digits only, within the
     * type's range); everything else as CommandLine::AddValue does.
     * @param cmd the command line
     * @param name the option's name
     * @param help its help text
     * @param value where it goes (its value now is the default)
     */
    template <typename T>
    static void Add(CommandLine& cmd, const std::string& name, const std::string& help, T& value)
    {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
        {
            T* dest = &value;
            ib_compat::AddCommandLineOption(
                cmd,
                name,
                help,
                [dest, name](const std::string& text) {
                    *dest = static_cast<T>(ParseInteger(name,
                                                        text,
                                                        std::is_signed_v<T>,
                                                        std::numeric_limits<T>::max()));
                    return true;
                },
                std::to_string(value));
        }
        else if constexpr (std::is_floating_point_v<T>)
        {
            T* dest = &value;
            std::ostringstream def;
            def << value;
            ib_compat::AddCommandLineOption(
                cmd,
                name,
                help,
                [dest, name](const std::string& text) {
                    *dest = static_cast<T>(ParseReal(name, text));
                    return true;
                },
                def.str());
        }
        else
        {
            cmd.AddValue(name, help, value);
        }
    }

    /**
     * @param cmd the command line
     * @param name the option's name
     * @param attributePath the attribute it sets ("ns3::Class::Attribute")
     */
    static void Add(CommandLine& cmd, const std::string& name, const std::string& attributePath);

    /**
     * Print "error: <message>" to standard error and exit with status 1.
     * @param message what is wrong and what to give instead
     */
    [[noreturn]] static void Fail(const std::string& message);

    /**
     * @param name the option's name, for the message
     * @param text what the user gave
     * @param isSigned whether a minus sign is allowed
     * @param max the type's largest value
     * @return the number (a negative one in two's complement); Fail unless @p text is a
     *         whole number within range
     */
    static uint64_t ParseInteger(const std::string& name,
                                 const std::string& text,
                                 bool isSigned,
                                 uint64_t max);
    /**
     * @param name the option's name, for the message
     * @param text what the user gave
     * @return the number; Fail unless @p text is a finite number with nothing after it
     */
    static double ParseReal(const std::string& name, const std::string& text);
};

} // namespace ns3

/// Stop with "error: <message>" and exit status 1 unless @p cond holds (for user input).
#define IB_REQUIRE(cond, message)                                                                  \
    do                                                                                             \
    {                                                                                              \
        if (!(cond))                                                                               \
        {                                                                                          \
            std::ostringstream ibRequireMessage;                                                   \
            ibRequireMessage << message;                                                           \
            ns3::IbOptions::Fail(ibRequireMessage.str());                                          \
        }                                                                                          \
    } while (false)

/// Stop with "error: <message>" and exit status 1 if @p cond holds (for user input).
#define IB_REFUSE(cond, message) IB_REQUIRE(!(cond), message)

#endif /* IB_EXAMPLE_OPTIONS_H */
