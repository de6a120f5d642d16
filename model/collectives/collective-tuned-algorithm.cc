/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "collective-tuned-algorithm.h"

#include "collective-reduction.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/string.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CollectiveTunedAlgorithm");

NS_OBJECT_ENSURE_REGISTERED(CollectiveTunedAlgorithm);

/// The short name CollectiveAlgorithm::CreateByName knows this algorithm by.
static const CollectiveAlgorithmName g_tunedName("tuned", "ns3::CollectiveTunedAlgorithm");

TypeId
CollectiveTunedAlgorithm::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::CollectiveTunedAlgorithm")
            .SetParent<CollectiveAlgorithm>()
            .SetGroupName("Infiniband")
            .AddConstructor<CollectiveTunedAlgorithm>()
            .AddAttribute("AllReduce",
                          "Allreduce rule: NAME:BYTES,...,NAME (e.g. \"rd:2048,hd\", MPICH's "
                          "recursive doubling for messages under 2 KiB, Rabenseifner's "
                          "halving-doubling above).",
                          StringValue("rd:2048,hd"),
                          MakeStringAccessor(&CollectiveTunedAlgorithm::SetAllReduce,
                                             &CollectiveTunedAlgorithm::GetAllReduce),
                          MakeStringChecker())
            .AddAttribute("ReduceScatter",
                          "Reduce-scatter rule (same form).",
                          StringValue("ring"),
                          MakeStringAccessor(&CollectiveTunedAlgorithm::SetReduceScatter,
                                             &CollectiveTunedAlgorithm::GetReduceScatter),
                          MakeStringChecker())
            .AddAttribute("AllGather",
                          "Allgather rule (same form).",
                          StringValue("ring"),
                          MakeStringAccessor(&CollectiveTunedAlgorithm::SetAllGather,
                                             &CollectiveTunedAlgorithm::GetAllGather),
                          MakeStringChecker())
            .AddAttribute("Other",
                          "Rule for broadcast, reduce, barrier, all-to-all and all-to-allv "
                          "(same form).",
                          StringValue("ring"),
                          MakeStringAccessor(&CollectiveTunedAlgorithm::SetOther,
                                             &CollectiveTunedAlgorithm::GetOther),
                          MakeStringChecker());
    return tid;
}

CollectiveTunedAlgorithm::CollectiveTunedAlgorithm()
    : m_allReduce(Parse("AllReduce", "rd:2048,hd")),
      m_reduceScatter(Parse("ReduceScatter", "ring")),
      m_allGather(Parse("AllGather", "ring")),
      m_other(Parse("Other", "ring"))
{
}

CollectiveTunedAlgorithm::~CollectiveTunedAlgorithm() = default;

void
CollectiveTunedAlgorithm::DoDispose()
{
    for (Rule* r : {&m_allReduce, &m_reduceScatter, &m_allGather, &m_other})
    {
        r->algorithms.clear();
    }
    CollectiveAlgorithm::DoDispose();
}

std::string
CollectiveTunedAlgorithm::GetName() const
{
    return "tuned";
}

CollectiveTunedAlgorithm::Rule
CollectiveTunedAlgorithm::Parse(const std::string& attribute, const std::string& text)
{
    Rule r;
    r.text = text;
    const std::string what =
        "CollectiveTunedAlgorithm attribute " + attribute + "=\"" + text + "\": ";
    std::stringstream in(text.empty() ? std::string("ring") : text);
    std::string entry;
    bool last = false;
    while (std::getline(in, entry, ','))
    {
        NS_ABORT_MSG_IF(last,
                        what << "only the last entry may be a name alone; write NAME:BYTES "
                                "for each earlier one, e.g. rd:2048,hd");
        const size_t colon = entry.find(':');
        const std::string name = entry.substr(0, colon);
        NS_ABORT_MSG_IF(name.empty(), what << "an entry has no algorithm name");
        NS_ABORT_MSG_IF(name == "tuned" || name == "ns3::CollectiveTunedAlgorithm",
                        what << "a rule cannot choose the tuned algorithm itself");
        const std::vector<std::string> known = CollectiveAlgorithm::GetShortNames();
        const bool isKnown = name.rfind("ns3::", 0) == 0 ||
                             std::find(known.begin(), known.end(), name) != known.end();
        if (!isKnown)
        {
            std::string list;
            for (const std::string& k : known)
            {
                list += (list.empty() ? "" : ", ") + k;
            }
            NS_ABORT_MSG(what << "unknown algorithm '" << name << "'; use one of " << list
                              << " or a TypeId name");
        }
        if (colon == std::string::npos)
        {
            last = true;
        }
        else
        {
            const std::string bytes = entry.substr(colon + 1);
            uint64_t b = 0;
            size_t used = 0;
            try
            {
                b = std::stoull(bytes, &used);
            }
            catch (const std::exception&)
            {
                used = 0;
            }
            NS_ABORT_MSG_IF(used == 0 || used != bytes.size() ||
                                bytes.find_first_not_of("0123456789") != std::string::npos,
                            what << "'" << bytes << "' is not a byte count");
            NS_ABORT_MSG_IF(!r.below.empty() && b <= r.below.back(),
                            what << "the byte thresholds must increase");
            r.below.push_back(b);
        }
        r.algorithms.push_back(CollectiveAlgorithm::CreateByName(name));
    }
    NS_ABORT_MSG_IF(!text.empty() && text.back() == ',',
                    what << "the rule ends with a comma; end it with the algorithm for the "
                            "largest messages, e.g. rd:2048,hd");
    NS_ABORT_MSG_UNLESS(last,
                        what << "the last entry must be a name alone (the algorithm for the "
                                "largest messages), e.g. rd:2048,hd");
    return r;
}

const CollectiveTunedAlgorithm::Rule&
CollectiveTunedAlgorithm::RuleFor(CollectiveKind kind) const
{
    switch (kind)
    {
    case CollectiveKind::ALLREDUCE:
        return m_allReduce;
    case CollectiveKind::REDUCE_SCATTER:
        return m_reduceScatter;
    case CollectiveKind::ALLGATHER:
        return m_allGather;
    default:
        return m_other;
    }
}

Ptr<CollectiveAlgorithm>
CollectiveTunedAlgorithm::Choose(const CollectiveOpSpec& spec) const
{
    const Rule& r = RuleFor(spec.kind);
    const uint64_t bytes = spec.count * CollectiveReduction::SizeOf(spec.type);
    for (size_t k = 0; k < r.below.size(); ++k)
    {
        if (bytes < r.below[k])
        {
            return r.algorithms[k];
        }
    }
    return r.algorithms.back();
}

void
CollectiveTunedAlgorithm::Build(const CollectiveOpSpec& spec,
                                uint32_t rank,
                                uint32_t n,
                                uint64_t chunkBytes,
                                std::vector<CollectiveStep>& prog) const
{
    Choose(spec)->Build(spec, rank, n, chunkBytes, prog);
}

uint64_t
CollectiveTunedAlgorithm::ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const
{
    return Choose(spec)->ScratchBytes(spec, n);
}

void
CollectiveTunedAlgorithm::BuildAllReduce(const Ctx& c, uint64_t bytes) const
{
    NS_FATAL_ERROR("CollectiveTunedAlgorithm::BuildAllReduce: Build delegates every operation");
}

void
CollectiveTunedAlgorithm::SetAllReduce(std::string v)
{
    m_allReduce = Parse("AllReduce", v);
}

std::string
CollectiveTunedAlgorithm::GetAllReduce() const
{
    return m_allReduce.text;
}

void
CollectiveTunedAlgorithm::SetReduceScatter(std::string v)
{
    m_reduceScatter = Parse("ReduceScatter", v);
}

std::string
CollectiveTunedAlgorithm::GetReduceScatter() const
{
    return m_reduceScatter.text;
}

void
CollectiveTunedAlgorithm::SetAllGather(std::string v)
{
    m_allGather = Parse("AllGather", v);
}

std::string
CollectiveTunedAlgorithm::GetAllGather() const
{
    return m_allGather.text;
}

void
CollectiveTunedAlgorithm::SetOther(std::string v)
{
    m_other = Parse("Other", v);
}

std::string
CollectiveTunedAlgorithm::GetOther() const
{
    return m_other.text;
}

} // namespace ns3
