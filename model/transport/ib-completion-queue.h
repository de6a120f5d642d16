/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_COMPLETION_QUEUE_H
#define IB_COMPLETION_QUEUE_H

#include "ib-verbs.h"

#include "ns3/callback.h"
#include "ns3/ib-fifo.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup infiniband-transport
 * @brief A completion queue (ibv_cq): work completions of the queue pairs attached to
 * it, in the order the HCA generates them.
 *
 * Completions are either queued for Poll() (up to Depth entries; one more stops the
 * simulation with a message, as a real CQ raises an asynchronous error, or, with
 * DropOnOverrun, is dropped and counted as an overrun) or, if a completion callback is set, handed
 * to it as they are generated and not queued. The "Completion" trace fires for every completion in
 * both cases.
 */
class IbCompletionQueue : public Object
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbCompletionQueue();
    ~IbCompletionQueue() override;

    /**
     * TracedCallback signature of the Completion trace.
     * @param wc the completion
     */
    typedef void (*CompletionTracedCallback)(const IbWorkCompletion& wc);

    /**
     * Take up to @p max completions, oldest first.
     * @param max the most to return
     * @return the completions
     */
    std::vector<IbWorkCompletion> Poll(uint32_t max);

    /**
     * Deliver each completion to @p cb as it is generated instead of queueing it.
     * A null callback returns to polling.
     * @param cb the consumer
     */
    void SetCompletionCallback(Callback<void, const IbWorkCompletion&> cb);

    /**
     * Add a completion now (called by the HCA when the CQE becomes visible to the host).
     * Its timestamp is set to the current time.
     * @param wc the completion
     */
    void Deliver(IbWorkCompletion wc);

    /// @return the most completions the queue holds for Poll()
    uint32_t GetDepth() const;
    /// @return completions waiting for Poll()
    uint32_t GetNumEntries() const;
    /// @return completions dropped because the queue was full
    uint64_t GetOverruns() const;
    /// @return completions generated so far
    uint64_t GetTotalCompletions() const;

  protected:
    void DoDispose() override;

  private:
    uint32_t m_depth;                                    //!< Depth attribute
    IbFifo<IbWorkCompletion> m_queue;                    //!< completions waiting for Poll
    Callback<void, const IbWorkCompletion&> m_callback;  //!< push-mode consumer
    bool m_dropOnOverrun;                                //!< drop and count, not stop
    uint64_t m_overruns;                                 //!< dropped completions
    uint64_t m_total;                                    //!< completions generated
    TracedCallback<const IbWorkCompletion&> m_completed; //!< Completion trace
};

} // namespace ns3

#endif /* IB_COMPLETION_QUEUE_H */
