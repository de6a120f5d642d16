/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "shell-test-util.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

namespace ns3
{
namespace shelltest
{

std::string
RunCommand(const std::string& cmd)
{
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p)
    {
        return out;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    {
        out.append(buf, n);
    }
    pclose(p);
    return out;
}

bool
HaveTool(const std::string& tool)
{
    return !RunCommand("command -v '" + tool + "'").empty();
}

TempDir::TempDir(const std::string& prefix)
{
    std::string name = "/tmp/" + prefix + "-XXXXXX";
    std::vector<char> tmpl(name.begin(), name.end());
    tmpl.push_back('\0');
    if (mkdtemp(tmpl.data()) != nullptr)
    {
        m_path = tmpl.data();
    }
}

TempDir::~TempDir()
{
    if (m_path.empty())
    {
        return;
    }
    const std::string cmd = "rm -rf '" + m_path + "'";
    if (std::system(cmd.c_str()) != 0)
    {
        std::cerr << "could not remove " << m_path << "\n";
    }
}

const std::string&
TempDir::Path() const
{
    return m_path;
}

} // namespace shelltest
} // namespace ns3
