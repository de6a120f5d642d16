/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "ib-channel-cycle-finder.h"

#include "ns3/assert.h"
#include "ns3/log.h"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/strong_components.hpp>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("IbChannelCycleFinder");

/// The dependency graph: channels and dependencies, a dependency's edge index its number.
struct IbChannelCycleFinder::Impl
{
    /// Channels are vertices, dependencies edges, both numbered with uint32_t.
    using Graph = boost::compressed_sparse_row_graph<boost::directedS,
                                                     boost::no_property,
                                                     boost::no_property,
                                                     boost::no_property,
                                                     uint32_t,
                                                     uint32_t>;
    Graph graph; //!< the graph

    /**
     * @param n channels
     * @param deps dependencies, sorted by first channel
     */
    Impl(uint32_t n, const std::vector<Dependency>& deps)
        : graph(boost::edges_are_sorted, deps.begin(), deps.end(), n, deps.size())
    {
    }
};

namespace
{

/// Keeps the dependencies whose entry in a vector is nonzero.
template <class G>
struct PresentDependency
{
    const G* graph{nullptr};                       //!< the full graph
    const std::vector<uint32_t>* present{nullptr}; //!< per dependency: nonzero if present

    /**
     * @param e a dependency
     * @return true if it is present
     */
    template <class Edge>
    bool operator()(const Edge& e) const
    {
        return (*present)[boost::get(boost::edge_index, *graph, e)] != 0;
    }
};

/// Thrown by CycleAtFirstBackEdge to stop the search: a cycle was found.
struct CycleFound
{
};

/**
 * DFS visitor: remembers each channel's tree dependency; at the first back edge, writes the
 * cycle (tree path from the back edge's target to its source, then the back edge) and
 * stops the search.
 */
template <class G>
class CycleAtFirstBackEdge : public boost::default_dfs_visitor
{
  public:
    /// The full graph's edge descriptor.
    using Edge = typename boost::graph_traits<G>::edge_descriptor;

    /**
     * @param g the full graph (edge indices)
     * @param treeEdge per channel: the dependency the search reached it by
     * @param cycle receives the cycle's dependencies
     */
    CycleAtFirstBackEdge(const G& g, std::vector<Edge>& treeEdge, std::vector<uint32_t>& cycle)
        : m_g(&g),
          m_treeEdge(&treeEdge),
          m_cycle(&cycle)
    {
    }

    /**
     * @param e a dependency to a channel not yet reached
     * @param fg the graph searched
     */
    template <class FG>
    void tree_edge(const Edge& e, const FG& fg) const
    {
        (*m_treeEdge)[boost::target(e, fg)] = e;
    }

    /**
     * @param e a dependency back to a channel on the search path: it closes a cycle
     * @param fg the graph searched
     */
    template <class FG>
    void back_edge(const Edge& e, const FG& fg) const
    {
        const uint32_t to = boost::target(e, fg);
        for (uint32_t x = boost::source(e, fg); x != to;)
        {
            const Edge& t = (*m_treeEdge)[x];
            m_cycle->push_back(boost::get(boost::edge_index, *m_g, t));
            x = boost::source(t, fg);
        }
        std::reverse(m_cycle->begin(), m_cycle->end());
        m_cycle->push_back(boost::get(boost::edge_index, *m_g, e));
        throw CycleFound{};
    }

  private:
    const G* m_g;                   //!< the full graph
    std::vector<Edge>* m_treeEdge;  //!< per channel: its tree dependency
    std::vector<uint32_t>* m_cycle; //!< the cycle found
};

} // namespace

IbChannelCycleFinder::IbChannelCycleFinder(uint32_t numChannels,
                                           const std::vector<Dependency>& dependencies)
{
    NS_LOG_FUNCTION(this << numChannels << dependencies.size());
    // (A named lambda: a release build puts the condition in sizeof, where C++17 takes no
    // lambda expression.)
    const auto byFirst = [](const Dependency& a, const Dependency& b) { return a.first < b.first; };
    NS_ASSERT_MSG(std::is_sorted(dependencies.begin(), dependencies.end(), byFirst),
                  "dependencies not sorted by first channel");
    m_impl = std::make_unique<Impl>(numChannels, dependencies);
}

IbChannelCycleFinder::~IbChannelCycleFinder() = default;

uint32_t
IbChannelCycleFinder::GetNumChannels() const
{
    return boost::num_vertices(m_impl->graph);
}

uint32_t
IbChannelCycleFinder::GetNumDependencies() const
{
    return boost::num_edges(m_impl->graph);
}

std::vector<std::vector<uint32_t>>
IbChannelCycleFinder::FindComponentCycles() const
{
    const Impl::Graph& g = m_impl->graph;
    const uint32_t n = boost::num_vertices(g);
    std::vector<uint32_t> comp(n);
    const uint32_t nComp = boost::strong_components(
        g,
        boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
    std::vector<uint32_t> size(nComp, 0);
    for (uint32_t c = 0; c < n; ++c)
    {
        ++size[comp[c]];
    }
    std::vector<std::vector<uint32_t>> cycles;
    std::vector<bool> reported(nComp, false);
    std::vector<int64_t> parent(n, -1);
    for (uint32_t v = 0; v < n; ++v)
    {
        if (size[comp[v]] < 2 || reported[comp[v]])
        {
            continue;
        }
        reported[comp[v]] = true;
        // Shortest cycle through v inside its component (BFS back to v).
        std::vector<uint32_t> queue{v};
        std::vector<uint32_t> touched{v};
        parent[v] = v;
        int64_t last = -1;
        for (std::size_t head = 0; head < queue.size() && last < 0; ++head)
        {
            const uint32_t u = queue[head];
            for (auto [e, eEnd] = boost::out_edges(u, g); e != eEnd; ++e)
            {
                const uint32_t w = boost::target(*e, g);
                if (comp[w] != comp[v])
                {
                    continue;
                }
                if (w == v)
                {
                    last = u;
                    break;
                }
                if (parent[w] < 0)
                {
                    parent[w] = u;
                    touched.push_back(w);
                    queue.push_back(w);
                }
            }
        }
        std::vector<uint32_t> cycle;
        for (int64_t x = last; x >= 0; x = (static_cast<uint32_t>(x) == v ? -1 : parent[x]))
        {
            cycle.push_back(static_cast<uint32_t>(x));
        }
        std::reverse(cycle.begin(), cycle.end());
        for (uint32_t x : touched)
        {
            parent[x] = -1;
        }
        cycles.push_back(std::move(cycle));
    }
    return cycles;
}

std::vector<uint32_t>
IbChannelCycleFinder::FindFirstCycle(const std::vector<uint32_t>& present) const
{
    using G = Impl::Graph;
    const G& g = m_impl->graph;
    NS_ASSERT(present.size() == boost::num_edges(g));
    const PresentDependency<G> keep{&g, &present};
    const boost::filtered_graph<G, PresentDependency<G>> fg(g, keep);
    std::vector<boost::default_color_type> color(boost::num_vertices(g));
    std::vector<boost::graph_traits<G>::edge_descriptor> treeEdge(boost::num_vertices(g));
    std::vector<uint32_t> cycle;
    try
    {
        boost::depth_first_search(
            fg,
            CycleAtFirstBackEdge<G>(g, treeEdge, cycle),
            boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g)));
    }
    catch (const CycleFound&)
    {
        // The visitor stopped the search at the first back edge (Boost.Graph's way to end a
        // search early); cycle holds it.
    }
    return cycle;
}

} // namespace ns3
