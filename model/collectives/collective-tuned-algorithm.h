/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef COLLECTIVE_TUNED_ALGORITHM_H
#define COLLECTIVE_TUNED_ALGORITHM_H

#include "collective-algorithm.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-collectives
 * @brief Algorithm selection by message size, as collective libraries do it: for each
 * operation a rule such as "rd:2048,hd" (recursive doubling below 2048 bytes, halving-
 * doubling from there on, MPICH's allreduce) picks the algorithm that builds the programs.
 *
 * A rule is a comma-separated list of NAME:BYTES entries, in increasing BYTES, ending with
 * a NAME alone; NAME is a short name or TypeId name of CollectiveAlgorithm::CreateByName
 * and applies to messages of fewer than BYTES bytes (the operation's count times its
 * element size) that no earlier entry took. An empty rule uses "ring". The algorithms are
 * created with their default attributes when the rule is set.
 */
class CollectiveTunedAlgorithm : public CollectiveAlgorithm
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    CollectiveTunedAlgorithm();
    ~CollectiveTunedAlgorithm() override;

    std::string GetName() const override;

    void Build(const CollectiveOpSpec& spec,
               uint32_t rank,
               uint32_t n,
               uint64_t chunkBytes,
               std::vector<CollectiveStep>& prog) const override;
    uint64_t ScratchBytes(const CollectiveOpSpec& spec, uint32_t n) const override;

    /**
     * @param spec an operation
     * @return the algorithm the rules choose for it
     */
    Ptr<CollectiveAlgorithm> Choose(const CollectiveOpSpec& spec) const;

  protected:
    void DoDispose() override;
    /// Never called: Build hands every operation to the chosen algorithm.
    void BuildAllReduce(const Ctx& c, uint64_t bytes) const override;

  private:
    /// A parsed rule.
    struct Rule
    {
        std::string text;                                 ///< as set
        std::vector<uint64_t> below;                      ///< thresholds, increasing
        std::vector<Ptr<CollectiveAlgorithm>> algorithms; ///< one more than thresholds
    };

    /**
     * Parse a rule; abort naming the attribute and what is wrong.
     * @param attribute the attribute's name
     * @param text the rule
     * @return the rule
     */
    static Rule Parse(const std::string& attribute, const std::string& text);
    /**
     * @param kind an operation kind
     * @return its rule
     */
    const Rule& RuleFor(CollectiveKind kind) const;

    /// @param v the AllReduce rule
    void SetAllReduce(std::string v);
    /// @return the AllReduce rule
    std::string GetAllReduce() const;
    /// @param v the ReduceScatter rule
    void SetReduceScatter(std::string v);
    /// @return the ReduceScatter rule
    std::string GetReduceScatter() const;
    /// @param v the AllGather rule
    void SetAllGather(std::string v);
    /// @return the AllGather rule
    std::string GetAllGather() const;
    /// @param v the Other rule
    void SetOther(std::string v);
    /// @return the Other rule
    std::string GetOther() const;

    Rule m_allReduce;     //!< AllReduce
    Rule m_reduceScatter; //!< ReduceScatter
    Rule m_allGather;     //!< AllGather
    Rule m_other;         //!< broadcast, reduce, barrier, all-to-all(v)
};

} // namespace ns3

#endif /* COLLECTIVE_TUNED_ALGORITHM_H */
