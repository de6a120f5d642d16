/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PROFILE_HELPER_H
#define IB_PROFILE_HELPER_H

#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-helper
 * @brief Named profiles of deployed hardware and software: each sets, through
 * Config::SetDefault, the host interface (a PcieLink on every HCA and the HCA's stages),
 * the links' FEC latency, the switches' port-to-port latency and the collective library's
 * costs together, every value from a component source that doc/validation-sources.md
 * cites (what kind of measurement it is), or left at the idealized default where none was
 * found, which the profile's description says.
 *
 * Without a profile the model stays the idealized one (the exact tests' meaning). Apply
 * a profile once, before the objects are created (it sets attribute defaults).
 */
class IbProfileHelper
{
  public:
    /// One attribute default a profile sets.
    struct Setting
    {
        std::string attribute; ///< "ns3::Class::Attribute"
        std::string value;     ///< its value, as a string
        std::string source;    ///< where the value comes from
    };

    /// A profile.
    struct Profile
    {
        std::string name;                 ///< e.g. "hdr-cx6-mpi"
        std::string summary;              ///< one line
        bool pcie{false};                 ///< give every HCA a PcieLink
        std::string algorithm;            ///< collective algorithm ("" = the example's)
        std::vector<Setting> settings;    ///< attribute defaults
        std::vector<std::string> missing; ///< components with no source: left out
    };

    /// @return the profiles' names
    static std::vector<std::string> GetNames();
    /**
     * @param name a profile name
     * @return the profile, or nullptr
     */
    static const Profile* Find(const std::string& name);
    /**
     * Set every attribute default of the profile (and a PcieLink on every HCA if it has
     * one).
     * @param name a profile name
     * @param [out] error why not (an unknown name: the names to use)
     * @return true if applied
     */
    static bool Apply(const std::string& name, std::string* error);
    /**
     * The value of a program's --profile=NAME argument, read before CommandLine::Parse so
     * that the profile can be applied first and the user's own --ns3::... settings on the
     * same command line override it.
     * @param argc the program's argc
     * @param argv the program's argv
     * @return NAME, or "" if there is no --profile
     */
    static std::string FindInArguments(int argc, char** argv);
    /**
     * @param name a profile name
     * @return what it sets, a line per attribute with its source, and what it leaves out
     */
    static std::string Describe(const std::string& name);
};

} // namespace ns3

#endif /* IB_PROFILE_HELPER_H */
