/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What the tests that check files with outside tools (tshark) share: running a shell command
 * for its output, asking whether a tool is installed, and a temporary folder that goes away
 * with what it holds.
 */

#ifndef SHELL_TEST_UTIL_H
#define SHELL_TEST_UTIL_H

#include <string>

namespace ns3
{
namespace shelltest
{

/**
 * Run a shell command.
 * @param cmd the command line (given to /bin/sh)
 * @return what it wrote to standard output ("" if it could not be started)
 */
std::string RunCommand(const std::string& cmd);

/**
 * @param tool a program name
 * @return true if the shell finds it on the PATH
 */
bool HaveTool(const std::string& tool);

/// A new folder under /tmp, removed with what it holds when the object goes.
class TempDir
{
  public:
    /**
     * @param prefix the start of the folder's name
     */
    explicit TempDir(const std::string& prefix = "ib-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    /// @return the folder's path ("" if it could not be made)
    const std::string& Path() const;

  private:
    std::string m_path; //!< the folder
};

} // namespace shelltest
} // namespace ns3

#endif /* SHELL_TEST_UTIL_H */
