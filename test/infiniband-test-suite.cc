/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The module's tests as an ns-3 TestSuite, so that ns-3's own harness runs them: in an ns-3
// source tree `./test.py --suite=infiniband` (or test-runner), standalone
// `build/infiniband-test-runner --suite=infiniband`. The tests themselves are GoogleTest
// tests (test/*-test.cc, built into infiniband-gtest, whose path IB_GTEST_PATH names): the
// suite has one test case per test file, which runs that file's GoogleTest suites in a
// process of their own (as GoogleTest's death tests and ns-3's global simulator state
// want) and passes when all of them pass.

#include "ns3/test.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace
{

namespace fs = std::filesystem;

/**
 * @param file a GoogleTest source file
 * @return a --gtest_filter that selects every test defined in it (TEST, TEST_F, TEST_P
 *         and their instantiations)
 */
std::string
FilterOf(const fs::path& file)
{
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::regex test(R"(\bTEST(?:_F|_P)?\s*\(\s*([A-Za-z0-9_]+)\s*,)");
    std::set<std::string> suites;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), test); it != std::sregex_iterator();
         ++it)
    {
        suites.insert((*it)[1].str());
    }
    std::string filter;
    for (const auto& suite : suites)
    {
        // TEST_P suites run as <Instantiation>/<Suite>.<Test>/<n>.
        filter += (filter.empty() ? "" : ":") + suite + ".*:*/" + suite + ".*";
    }
    return filter;
}

/**
 * @ingroup infiniband-tests
 * One test file's GoogleTest suites, run by infiniband-gtest.
 */
class GoogleTestFileCase : public ns3::TestCase
{
  public:
    /**
     * @param file the test file (test/<name>-test.cc)
     */
    explicit GoogleTestFileCase(const fs::path& file)
        : ns3::TestCase(file.stem().string()),
          m_file(file)
    {
    }

  private:
    void DoRun() override
    {
        const std::string filter = FilterOf(m_file);
        NS_TEST_ASSERT_MSG_EQ(filter.empty(), false, m_file << " defines no GoogleTest test");
        NS_TEST_ASSERT_MSG_EQ(fs::exists(IB_GTEST_PATH),
                              true,
                              IB_GTEST_PATH << " is missing: build the infiniband-gtest target");
        // Its own scratch folder: some tests write pcap and dump files to the current one.
        const fs::path dir =
            fs::temp_directory_path() / ("infiniband-test-" + m_file.stem().string());
        fs::create_directories(dir);
        const std::string cmd = "cd '" + dir.string() + "' && '" + std::string(IB_GTEST_PATH) +
                                "' --gtest_brief=1 '--gtest_filter=" + filter + "'";
        const int status = std::system(cmd.c_str());
        fs::remove_all(dir);
        NS_TEST_ASSERT_MSG_EQ(status,
                              0,
                              "GoogleTest suites of " << m_file.filename().string()
                                                      << " failed (its output is above); rerun "
                                                         "them with: "
                                                      << cmd);
    }

    fs::path m_file; //!< the test file
};

/**
 * @ingroup infiniband-tests
 * The suite: one GoogleTestFileCase per test/*-test.cc file of the module (IB_SOURCE_DIR).
 */
class InfinibandTestSuite : public ns3::TestSuite
{
  public:
    InfinibandTestSuite()
        : ns3::TestSuite("infiniband")
    {
        std::vector<fs::path> files;
        const fs::path dir = fs::path(IB_SOURCE_DIR) / "test";
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
        {
            const std::string name = e.path().filename().string();
            if (name.size() > 8 && name.compare(name.size() - 8, 8, "-test.cc") == 0)
            {
                files.push_back(e.path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const auto& f : files)
        {
            AddTestCase(new GoogleTestFileCase(f));
        }
    }
};

/// The one instance, registered with ns-3's test runner.
InfinibandTestSuite g_infinibandTestSuite;

} // namespace
