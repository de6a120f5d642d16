/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#include "training-workload-file.h"

#include "ns3/abort.h"
#include "ns3/log.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TrainingWorkloadFile");

namespace
{

/// First-line words, in Parallelism order.
const char* const kParallelismNames[] = {"DATA",
                                         "HYBRID_TRANSFORMER",
                                         "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                         "HYBRID_DLRM",
                                         "HYBRID_DLRM_ENHANCED",
                                         "MODEL",
                                         "HYBRID_DATA_MODEL",
                                         "HYBRID_MODEL_DATA",
                                         "HYBRID_CUSTOMIZED",
                                         "MICRO",
                                         "DISTRIBUTED_INFERENCE"};

/// Collective names, in Collective order.
const char* const kCollectiveNames[] = {"NONE",
                                        "ALLREDUCE",
                                        "ALLGATHER",
                                        "REDUCESCATTER",
                                        "ALLTOALL"};

/// The layer fields, for messages.
const char* const kFieldNames[] = {"name",
                                   "reserved",
                                   "forward compute time",
                                   "forward collective",
                                   "forward size",
                                   "input-gradient compute time",
                                   "input-gradient collective",
                                   "input-gradient size",
                                   "weight-gradient compute time",
                                   "weight-gradient collective",
                                   "weight-gradient size",
                                   "update delay",
                                   "layer parallelism"};

/**
 * @param line a line
 * @return its whitespace-separated tokens
 */
std::vector<std::string>
Tokens(const std::string& line)
{
    std::istringstream is(line);
    std::vector<std::string> t;
    std::string w;
    while (is >> w)
    {
        t.push_back(w);
    }
    return t;
}

/**
 * Parse a non-negative number; a decimal fraction is allowed only if @p fraction.
 * @param s the text
 * @param fraction accept a fractional part (rounded to the nearest integer)
 * @param [out] v the value
 * @param [out] why what is wrong
 * @return true if it is one
 */
bool
Number(const std::string& s, bool fraction, uint64_t& v, std::string& why)
{
    if (s.empty() || s[0] == '-')
    {
        why = "'" + s + "' is negative; give 0 or more";
        return false;
    }
    std::size_t used = 0;
    double d = 0;
    try
    {
        d = std::stod(s, &used);
    }
    catch (const std::exception&)
    {
        used = 0;
    }
    if (used != s.size() || !std::isfinite(d) || d < 0 || d > 1.8e19)
    {
        why = "'" + s + "' is not a number";
        return false;
    }
    if (!fraction && d != std::floor(d))
    {
        why = "'" + s + "' is not a whole number";
        return false;
    }
    // Integers are taken exactly (a double holds 2^53 at most).
    if (s.find_first_of(".eE") == std::string::npos)
    {
        v = std::stoull(s);
    }
    else
    {
        v = static_cast<uint64_t>(std::llround(d));
    }
    return true;
}

} // namespace

bool
TrainingWorkloadFile::ParseParallelism(const std::string& name, Parallelism& p)
{
    for (uint32_t i = 0; i < sizeof(kParallelismNames) / sizeof(kParallelismNames[0]); ++i)
    {
        if (name == kParallelismNames[i])
        {
            p = static_cast<Parallelism>(i);
            return true;
        }
    }
    return false;
}

std::string
TrainingWorkloadFile::ParallelismName(Parallelism p)
{
    return kParallelismNames[static_cast<uint32_t>(p)];
}

std::string
TrainingWorkloadFile::CollectiveName(Collective c)
{
    return kCollectiveNames[static_cast<uint32_t>(c)];
}

bool
TrainingWorkloadFile::Parse(std::istream& in, const std::string& source, std::string* error)
{
    *this = TrainingWorkloadFile();
    uint32_t lineNo = 0;
    std::string line;
    auto fail = [&](const std::string& what) {
        if (error != nullptr)
        {
            *error = source + ":" + std::to_string(lineNo) + ": " + what;
        }
        return false;
    };
    // The next line that is not blank, as tokens (empty at the end of the file).
    auto next = [&]() {
        while (std::getline(in, line))
        {
            ++lineNo;
            std::vector<std::string> t = Tokens(line);
            if (!t.empty())
            {
                return t;
            }
        }
        return std::vector<std::string>();
    };

    // 1. The parallelism kind and its parameters.
    std::vector<std::string> head = next();
    if (head.empty())
    {
        return fail("empty file: the first line names the parallelism (DATA, "
                    "HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, ...)");
    }
    if (!ParseParallelism(head[0], parallelism))
    {
        std::string all;
        for (const char* n : kParallelismNames)
        {
            all += std::string(all.empty() ? "" : ", ") + n;
        }
        return fail("parallelism '" + head[0] + "' is unknown; the first word is one of " + all);
    }
    const bool dlrm =
        parallelism == Parallelism::HYBRID_DLRM || parallelism == Parallelism::HYBRID_DLRM_ENHANCED;
    for (std::size_t i = 1; i < head.size(); ++i)
    {
        std::string key = head[i];
        if (!key.empty() && key.back() == ':')
        {
            key.pop_back();
        }
        uint64_t v = 0;
        std::string why;
        if (dlrm && i == 1 && Number(head[i], false, v, why))
        {
            dlrmLastBottomLayer = static_cast<int64_t>(v); // ASTRA-sim 1.0: a bare number
            continue;
        }
        const bool known = key == "model_parallel_NPU_group" || key == "ep" || key == "pp" ||
                           key == "vpp" || key == "ga" || key == "all_gpus" || key == "pp_comm" ||
                           key == "DLRM_LAST_BOTTOM_LAYER" || key == "checkpoints" ||
                           key == "checkpoint_initiates";
        if (!known)
        {
            return fail("parameter '" + head[i] +
                        "' is unknown; the first line takes model_parallel_NPU_group, ep, pp, "
                        "vpp, ga, all_gpus, pp_comm, checkpoints, checkpoint_initiates and "
                        "DLRM_LAST_BOTTOM_LAYER, each followed by its value");
        }
        if (i + 1 >= head.size())
        {
            return fail("parameter '" + head[i] + "' has no value after it");
        }
        if (!Number(head[++i], key == "pp_comm", v, why))
        {
            return fail("parameter '" + key + "': " + why);
        }
        if (key == "checkpoints" || key == "checkpoint_initiates")
        {
            std::vector<uint32_t>& ids = key == "checkpoints" ? checkpoints : initiates;
            for (uint64_t k = 0; k < v; ++k)
            {
                uint64_t id = 0;
                if (i + 1 >= head.size() || !Number(head[i + 1], false, id, why))
                {
                    return fail("'" + key + ": " + std::to_string(v) + "' announces " +
                                std::to_string(v) + " layer numbers, " + std::to_string(k) +
                                " follow");
                }
                ++i;
                ids.push_back(static_cast<uint32_t>(id));
            }
            continue;
        }
        if (key != "pp_comm" && v > UINT32_MAX)
        {
            return fail("parameter '" + key + "' = " + std::to_string(v) + " is too large");
        }
        const uint32_t v32 = static_cast<uint32_t>(v);
        if (key == "model_parallel_NPU_group")
        {
            tp = v32; // 0: all ranks, as SimAI takes it
        }
        else if (key == "ep")
        {
            ep = std::max<uint32_t>(1, v32);
        }
        else if (key == "pp")
        {
            pp = std::max<uint32_t>(1, v32);
        }
        else if (key == "vpp")
        {
            vpp = std::max<uint32_t>(1, v32);
        }
        else if (key == "ga")
        {
            ga = std::max<uint32_t>(1, v32);
        }
        else if (key == "all_gpus")
        {
            allGpus = v32;
        }
        else if (key == "pp_comm")
        {
            ppComm = v;
        }
        else
        {
            dlrmLastBottomLayer = static_cast<int64_t>(v);
        }
    }

    // 2. The layer count.
    std::vector<std::string> countLine = next();
    uint64_t count = 0;
    std::string why;
    if (countLine.empty())
    {
        return fail("the file ends after the first line; the second line gives the number of "
                    "layers");
    }
    if (countLine.size() != 1 || !Number(countLine[0], false, count, why) || count == 0)
    {
        return fail("the second line gives the number of layers (one whole number above 0), "
                    "not '" +
                    line + "'");
    }

    // 3. The layers.
    const std::size_t want = parallelism == Parallelism::HYBRID_CUSTOMIZED ? 13 : 12;
    for (uint64_t l = 0; l < count; ++l)
    {
        std::vector<std::string> t = next();
        if (t.empty())
        {
            return fail("the file ends after " + std::to_string(l) + " of the " +
                        std::to_string(count) + " layers the second line announces");
        }
        // ASTRA-sim 1.0 files may end a layer with memory read and write bytes (ignored).
        if (t.size() < want)
        {
            return fail("layer '" + t[0] + "' has " + std::to_string(t.size()) + " fields, " +
                        std::to_string(want) + " expected: the " + kFieldNames[t.size()] +
                        " and what follows are missing (name, reserved, then compute time, "
                        "collective and size for the forward, input-gradient and "
                        "weight-gradient passes, then the update delay" +
                        (want == 13 ? ", then the layer's parallelism)" : ")"));
        }
        if (t.size() > want + 2 || (want == 12 && t.size() == 13))
        {
            return fail("layer '" + t[0] + "' has " + std::to_string(t.size()) + " fields, " +
                        std::to_string(want) + " expected (" + std::to_string(want + 2) +
                        " with memory read and write bytes)");
        }
        Layer layer;
        layer.name = t[0];
        layer.line = lineNo;
        try
        {
            std::size_t used = 0;
            layer.reserved = std::stoll(t[1], &used);
            if (used != t[1].size())
            {
                throw std::invalid_argument(t[1]);
            }
        }
        catch (const std::exception&)
        {
            return fail("layer '" + t[0] + "', field 2 (reserved): '" + t[1] +
                        "' is not a whole number (files write -1)");
        }
        for (uint32_t p = 0; p < 3; ++p)
        {
            PassSpec& ps = layer.pass[p];
            const std::size_t f = 2 + 3 * p;
            if (!Number(t[f], true, ps.compute, why))
            {
                return fail("layer '" + t[0] + "', field " + std::to_string(f + 1) + " (" +
                            kFieldNames[f] + "): " + why);
            }
            const std::string& c = t[f + 1];
            bool found = false;
            for (uint32_t k = 0;
                 k < sizeof(kCollectiveNames) / sizeof(kCollectiveNames[0]) && !found;
                 ++k)
            {
                const std::string base = kCollectiveNames[k];
                if (c.compare(0, base.size(), base) != 0)
                {
                    continue;
                }
                const std::string suffix = c.substr(base.size());
                if (suffix.empty() || suffix == "_EP" || suffix == "_DP_EP")
                {
                    found = true;
                    ps.collective = static_cast<Collective>(k);
                    ps.group = suffix.empty()    ? Group::DEFAULT
                               : suffix == "_EP" ? Group::EP
                                                 : Group::DP_EP;
                }
            }
            if (!found || (ps.collective == Collective::NONE && ps.group != Group::DEFAULT))
            {
                return fail("layer '" + t[0] + "', field " + std::to_string(f + 2) + " (" +
                            kFieldNames[f + 1] + "): '" + c +
                            "' is not a collective; use NONE, ALLREDUCE, ALLGATHER, "
                            "REDUCESCATTER or ALLTOALL, optionally with _EP or _DP_EP" +
                            (c.rfind("ALLTOALLV", 0) == 0
                                 ? " (all-to-allv, with sizes per pair, is not modelled)"
                                 : ""));
            }
            if (!Number(t[f + 2], false, ps.bytes, why))
            {
                return fail("layer '" + t[0] + "', field " + std::to_string(f + 3) + " (" +
                            kFieldNames[f + 2] + "): " + why);
            }
        }
        if (!Number(t[11], true, layer.updateDelay, why))
        {
            return fail("layer '" + t[0] + "', field 12 (update delay): " + why);
        }
        if (want == 13 && !ParseParallelism(t[12], layer.own))
        {
            return fail("layer '" + t[0] + "', field 13 (layer parallelism): '" + t[12] +
                        "' is not a parallelism kind (DATA, MODEL, HYBRID_DATA_MODEL, "
                        "HYBRID_MODEL_DATA)");
        }
        layers.push_back(layer);
    }
    std::vector<std::string> extra = next();
    if (!extra.empty())
    {
        return fail("more layers than the " + std::to_string(count) +
                    " the second line announces; correct the count or remove the line");
    }
    for (uint32_t id : checkpoints)
    {
        if (id >= layers.size())
        {
            lineNo = 1;
            return fail("checkpoint layer " + std::to_string(id) + " does not exist (layers 0.." +
                        std::to_string(layers.size() - 1) + ")");
        }
    }
    for (uint32_t id : initiates)
    {
        if (id >= layers.size())
        {
            lineNo = 1;
            return fail("checkpoint_initiates layer " + std::to_string(id) +
                        " does not exist (layers 0.." + std::to_string(layers.size() - 1) + ")");
        }
    }
    return true;
}

TrainingWorkloadFile
TrainingWorkloadFile::Read(const std::string& path)
{
    std::ifstream f(path);
    NS_ABORT_MSG_UNLESS(f, "TrainingWorkloadFile: cannot open '" << path << "'");
    TrainingWorkloadFile w;
    std::string error;
    NS_ABORT_MSG_UNLESS(w.Parse(f, path, &error), "TrainingWorkloadFile: " << error);
    NS_LOG_INFO(path << ": " << ParallelismName(w.parallelism) << ", " << w.layers.size()
                     << " layers");
    return w;
}

} // namespace ns3
