/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

// The module's layering, checked on its sources: a file under model/ (or helper/) includes
// headers of its own folder and of the layers below it only. IB_SOURCE_DIR is the
// repository (CMakeLists.txt defines it for this program).

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

namespace fs = std::filesystem;

/**
 * The layers, bottom up: a folder's rank. A file may include a header of its own layer or of
 * a layer of lower rank; folders of the same rank are siblings and include nothing of each
 * other. subnet/routing belongs to subnet's layer. The table in doc/infiniband.rst (Design)
 * says the same.
 */
const std::map<std::string, int>&
LayerRanks()
{
    static const std::map<std::string, int> ranks = {
        {"common", 0},
        {"scheduler", 0},
        {"wire", 1},
        {"host", 1},
        {"link", 2},
        {"switch", 3},
        {"subnet", 4},
        {"transport", 5},
        {"flow", 5},
        {"ipoib", 6},
        {"collectives", 6},
        {"sharp", 7},
        {"training", 8},
        {"apps", 8},
        {"helper", 9},
    };
    return ranks;
}

/**
 * @param root the repository
 * @param path a file under root's model/ or helper/
 * @return its layer: model/<layer>/..., "helper", or "" for a file at model/'s top level
 */
std::string
LayerOf(const fs::path& root, const fs::path& path)
{
    const fs::path rel = fs::relative(path, root);
    auto it = rel.begin();
    const std::string top = it->string();
    if (top == "helper")
    {
        return "helper";
    }
    ++it;
    const fs::path next = *it;
    ++it;
    return it == rel.end() ? "" : next.string();
}

/// The module's source files under model/ and helper/.
std::vector<fs::path>
ModuleFiles(const fs::path& root)
{
    std::vector<fs::path> files;
    for (const char* dir : {"model", "helper"})
    {
        if (!fs::exists(root / dir))
        {
            continue;
        }
        for (const auto& e : fs::recursive_directory_iterator(root / dir))
        {
            const std::string ext = e.path().extension().string();
            if (e.is_regular_file() && (ext == ".h" || ext == ".cc"))
            {
                files.push_back(e.path());
            }
        }
    }
    return files;
}

/**
 * Every include of a module header that goes up (or sideways to a sibling), as
 * "file:line: layer includes header (layer)", and every file whose layer the table does not
 * know.
 * @param root a repository (or a tree shaped like one)
 * @return the problems, none when the layering holds
 */
std::vector<std::string>
LayeringProblems(const fs::path& root)
{
    const std::vector<fs::path> files = ModuleFiles(root);
    std::map<std::string, std::string> headerLayer; // header file name -> its layer
    for (const auto& f : files)
    {
        if (f.extension() == ".h")
        {
            headerLayer[f.filename().string()] = LayerOf(root, f);
        }
    }
    const std::regex include(R"(^\s*#\s*include\s+"(?:ns3/)?([A-Za-z0-9_.\-]+\.h)\")");
    std::vector<std::string> problems;
    for (const auto& f : files)
    {
        const std::string layer = LayerOf(root, f);
        const std::string name = fs::relative(f, root).string();
        const bool topLevelDoc = layer.empty() && f.extension() == ".h";
        if (!topLevelDoc && LayerRanks().count(layer) == 0)
        {
            problems.push_back(name + ": folder '" + layer +
                               "' is not a layer of the table in test/ib-layering-test.cc");
            continue;
        }
        std::ifstream in(f);
        std::string line;
        for (unsigned n = 1; std::getline(in, line); ++n)
        {
            std::smatch m;
            if (!std::regex_search(line, m, include))
            {
                continue;
            }
            const auto h = headerLayer.find(m[1].str());
            if (h == headerLayer.end() || h->second == layer || h->second.empty())
            {
                continue; // not the module's, the same layer, or the doc-only header
            }
            if (topLevelDoc || LayerRanks().at(h->second) >= LayerRanks().at(layer))
            {
                problems.push_back(name + ":" + std::to_string(n) + ": " + layer + " includes " +
                                   m[1].str() + " (" + h->second + ")");
            }
        }
    }
    return problems;
}

/// @return the problems, one per line
std::string
Joined(const std::vector<std::string>& problems)
{
    std::ostringstream os;
    for (const auto& p : problems)
    {
        os << p << "\n";
    }
    return os.str();
}

/// Write @p text to @p path, creating its folders.
void
WriteFile(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

TEST(LayeringTest, NoFileIncludesAHigherLayer)
{
    const fs::path root(IB_SOURCE_DIR);
    ASSERT_TRUE(fs::exists(root / "model")) << root;
    EXPECT_GT(ModuleFiles(root).size(), 100u);
    const std::vector<std::string> problems = LayeringProblems(root);
    EXPECT_TRUE(problems.empty()) << Joined(problems);
}

TEST(LayeringTest, EveryLayerFolderIsInUseAndNoSourceIsAtModelsTopLevel)
{
    const fs::path root(IB_SOURCE_DIR);
    std::set<std::string> used;
    for (const auto& f : ModuleFiles(root))
    {
        const std::string layer = LayerOf(root, f);
        if (layer.empty())
        {
            EXPECT_EQ(f.extension(), ".h") << f << ": a .cc belongs in a layer folder";
        }
        used.insert(layer);
    }
    for (const auto& [layer, rank] : LayerRanks())
    {
        EXPECT_EQ(used.count(layer), 1u) << "layer '" << layer << "' has no files";
    }
}

// The check itself: a tree with one upward include, one sideways include between siblings
// and one include downwards gives exactly the first two.
TEST(LayeringTest, TheCheckFindsAnUpwardAndASidewaysInclude)
{
    const fs::path root = fs::temp_directory_path() / ("ib-layering-" + std::to_string(::getpid()));
    fs::remove_all(root);
    WriteFile(root / "model/switch/ib-switch.h", "#pragma once\n");
    WriteFile(root / "model/wire/ib-lrh-header.h", "#pragma once\n");
    WriteFile(root / "model/ipoib/ipoib-header.h", "#pragma once\n");
    WriteFile(root / "model/wire/ib-packet.cc",
              "#include \"ib-lrh-header.h\"\n\n#include \"ns3/ib-switch.h\"\n");
    WriteFile(root / "model/collectives/collective-x.cc",
              "#include \"ns3/ipoib-header.h\"\n#include \"ns3/ib-lrh-header.h\"\n");
    const std::vector<std::string> problems = LayeringProblems(root);
    fs::remove_all(root);
    ASSERT_EQ(problems.size(), 2u) << Joined(problems);
    EXPECT_NE(
        Joined(problems).find("model/wire/ib-packet.cc:3: wire includes ib-switch.h (switch)"),
        std::string::npos)
        << Joined(problems);
    EXPECT_NE(Joined(problems).find("collectives includes ipoib-header.h (ipoib)"),
              std::string::npos)
        << Joined(problems);
}

TEST(LayeringTest, AFolderMissingFromTheTableIsReported)
{
    const fs::path root =
        fs::temp_directory_path() / ("ib-layering-f-" + std::to_string(::getpid()));
    fs::remove_all(root);
    WriteFile(root / "model/ethernet/eth-port.cc", "\n");
    const std::vector<std::string> problems = LayeringProblems(root);
    fs::remove_all(root);
    ASSERT_EQ(problems.size(), 1u) << Joined(problems);
    EXPECT_NE(problems[0].find("folder 'ethernet' is not a layer"), std::string::npos);
}

} // namespace
