/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_PERFTEST_APPLICATION_H
#define IB_PERFTEST_APPLICATION_H

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/ib-verbs.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ns3
{

class IbCompletionQueue;
class IbMemoryRegion;
class IbQueuePair;

/**
 * @ingroup infiniband-apps
 * @brief What the two perftest processes exchange out of band (over TCP or rdma_cm)
 * before a test: how to reach the peer's queue pair and its buffer.
 */
struct IbPerftestEndpoint
{
    uint16_t lid{0};  ///< LID of the port the queue pair uses
    uint32_t qpn{0};  ///< queue pair number
    uint32_t psn{0};  ///< first PSN the queue pair sends
    uint32_t rkey{0}; ///< remote key of the buffer
    uint64_t addr{0}; ///< address the peer writes to, reads from or sends into
};

/**
 * @ingroup infiniband-apps
 * @brief One line of a perftest report: the measurement of one message size.
 *
 * Bandwidth tests fill the BW fields, latency tests the t_ fields (microseconds); see
 * IbPerftestApplication for the definitions.
 */
struct IbPerftestResult
{
    bool valid{false};      ///< false until the measurement is complete
    std::string test;       ///< test name, e.g. "write_bw"
    bool bandwidth{false};  ///< true for *_bw tests (BW columns), false for *_lat tests
    uint64_t bytes{0};      ///< message size (#bytes)
    uint32_t iterations{0}; ///< #iterations
    double bwPeakGbps{0};   ///< BW peak [Gb/s]; 0 if not computed (above 20000 iterations)
    double bwAvgGbps{0};    ///< BW average [Gb/s]
    double msgRateMpps{0};  ///< MsgRate [Mpps]
    double tMinUs{0};       ///< t_min [usec]
    double tMaxUs{0};       ///< t_max [usec]
    double tTypicalUs{0};   ///< t_typical [usec]: the median
    double tAvgUs{0};       ///< t_avg [usec]
    double tStdevUs{0};     ///< t_stdev [usec]
    double t99Us{0};        ///< 99% percentile [usec]
    double t999Us{0};       ///< 99.9% percentile [usec]
    Time firstPost;         ///< the first work request was posted
    Time lastEvent;         ///< the last completion (bw) or the last post (lat)
};

/**
 * @ingroup infiniband-apps
 * @brief One side (client or server) of a perftest benchmark (ib_write_bw, ib_write_lat,
 * ib_read_bw, ib_read_lat, ib_send_bw, ib_send_lat, ib_atomic_lat) over an RC queue pair
 * of the node's IbHca.
 *
 * As with perftest, two instances run, one per host, and they meet out of band:
 * IbPerftestHelper creates the queue pairs, completion queues and buffers, connects the
 * queue pairs, gives each side the other's IbPerftestEndpoint (LID, QP number, rkey,
 * address, as perftest exchanges over TCP) and pairs the two applications. The pairing
 * also stands for perftest's TCP synchronisation between message sizes: the client
 * starts a size once both sides are ready and starts the next one once both are done.
 *
 * Measurements follow perftest (perftest_resources.c run_iter_* and
 * perftest_parameters.c print_report_bw / print_report_lat):
 *
 * - Bandwidth tests (client): the client keeps up to TxDepth WRs outstanding; one WR in
 *   CqModeration (and the last) is signaled; tposted[i] is the time WR i is posted,
 *   tcompleted[j] the time the completion of signaled WR j is seen. BW average =
 *   bytes * iterations / (tcompleted[last] - tposted[0]); MsgRate = iterations / that
 *   time. BW peak = bytes / min over i <= j (j signaled) of
 *   (tcompleted[j] - tposted[i]) / (j - i + 1), computed only up to 20000 iterations
 *   (perftest's default; above it the column is 0). 1 Gb/s = 10^9 bit/s.
 * - write_lat and send_lat: ping-pong. The client posts message k once the completion
 *   of its message k-1 and the server's message k-1 have been seen; the server posts
 *   message k once the client's message k has landed and its own message k-1 has
 *   completed (write_lat detects arrival by the data landing in memory, the
 *   MessageReceived trace of the queue pair, as perftest polls the last byte of the
 *   buffer; send_lat by the receive completion). Samples are
 *   (tposted[k+1] - tposted[k]) / 2: half the round trip.
 * - read_lat and atomic_lat: the client posts one operation, waits for its completion,
 *   posts the next. Samples are tposted[k+1] - tposted[k], not halved.
 * - Latency statistics over the iterations - 1 samples, sorted, without the 2 largest
 *   (perftest's LAT_MEASURE_TAIL): m samples remain; t_min is the smallest, t_max the
 *   one after the m kept (the second largest of all), t_typical the median (mean of the
 *   two middle ones when m is even), t_avg and t_stdev over the m kept (perftest
 *   truncates each deviation to whole microseconds before squaring; this model does
 *   not), 99% and 99.9% percentiles the samples at index ceil(m * 0.99) and
 *   ceil(m * 0.999).
 *
 * Completions are seen either through the completion queues' callbacks (CqModeEvent) or
 * by polling them every PollInterval (the application wakes up at the first poll
 * instant at or after a completion, exactly as a loop polling at that period would).
 * A PollInterval of 0 (default) is an ideal busy-polling loop: completions are seen when
 * they become visible. The model has no CPU time: posting and polling cost nothing, and
 * event mode has no interrupt latency.
 */
class IbPerftestApplication : public Application
{
  public:
    /**
     * @brief Get the TypeId.
     * @return the TypeId of this class
     */
    static TypeId GetTypeId();

    IbPerftestApplication();
    ~IbPerftestApplication() override;

    /// The perftest programs.
    /// Most iterations per size (Iterations): each keeps its post and completion times.
    static constexpr uint32_t MAX_ITERATIONS = 100000000;

    enum Test : uint8_t
    {
        WRITE_BW,   ///< ib_write_bw
        WRITE_LAT,  ///< ib_write_lat
        READ_BW,    ///< ib_read_bw
        READ_LAT,   ///< ib_read_lat
        SEND_BW,    ///< ib_send_bw
        SEND_LAT,   ///< ib_send_lat
        ATOMIC_LAT, ///< ib_atomic_lat
        TEST_COUNT  ///< number of tests
    };

    /// The two sides.
    enum Role : uint8_t
    {
        CLIENT, ///< the side that drives the test (perftest run with a server name)
        SERVER  ///< the passive or answering side
    };

    /**
     * TracedCallback signature of the Result trace.
     * @param result the measurement of one message size
     */
    typedef void (*ResultTracedCallback)(const IbPerftestResult& result);
    /**
     * TracedCallback signature of the Post trace.
     * @param iteration index of the work request in the current size
     * @param bytes its message size
     */
    typedef void (*PostTracedCallback)(uint32_t iteration, uint64_t bytes);

    /**
     * @param name a test name (write_bw, write_lat, read_bw, read_lat, send_bw,
     *        send_lat, atomic_lat; the ib_ prefix is accepted)
     * @param [out] test the test, set on success
     * @return true if the name is known
     */
    static bool ParseTest(const std::string& name, Test& test);
    /**
     * @param test a test
     * @return its name, e.g. "write_bw"
     */
    static std::string TestName(Test test);
    /// @return the valid test names, comma separated (for error messages)
    static std::string ValidTestNames();
    /**
     * @param test a test
     * @return true for the *_bw tests
     */
    static bool IsBandwidthTest(Test test);
    /**
     * @param test a test
     * @return perftest's default -n: 5000 for write_bw, 1000 for the others
     */
    static uint32_t DefaultIterations(Test test);
    /**
     * @param test a test
     * @return perftest's default -s: 65536 for bandwidth tests, 2 for latency tests,
     *         8 (the only size) for atomic_lat
     */
    static uint64_t DefaultSize(Test test);

    /**
     * Give this side its resources (done by IbPerftestHelper before the start).
     * @param qp a connected RC queue pair (its CQs are used)
     * @param mr a buffer of at least 2 * (largest message) bytes, registered with local
     *        write and all remote rights: the first half is sent from, the second half
     *        is where the peer's messages land
     * @param remote the peer's queue pair and landing address
     */
    void Setup(Ptr<IbQueuePair> qp, Ptr<IbMemoryRegion> mr, const IbPerftestEndpoint& remote);
    /// @return this side's endpoint (what perftest would send to the peer)
    IbPerftestEndpoint GetLocalEndpoint() const;
    /**
     * Pair with the other side (both directions are needed).
     * @param peer the application on the other host
     */
    void SetPeer(Ptr<IbPerftestApplication> peer);
    /**
     * Run several message sizes one after the other (perftest -a runs 2 .. 2^23);
     * overrides the Size attribute. atomic_lat ignores it: it runs 8 bytes once, as
     * perftest, which does not let the size of atomic tests change.
     * @param sizes message sizes in bytes, in the order to run them
     */
    void SetSizes(const std::vector<uint64_t>& sizes);
    /// @return the message sizes this side runs (Size, or those given to SetSizes)
    std::vector<uint64_t> GetSizes() const;

    /// @return the Test attribute
    Test GetTest() const;
    /// @return the Role attribute
    Role GetRole() const;
    /// @return the iterations per size (Iterations, or perftest's default for the test)
    uint32_t GetIterations() const;
    /// @return the TxDepth attribute, as used (at most the iterations; 1 for latency tests)
    uint32_t GetTxDepth() const;
    /// @return the RxDepth attribute, as used (at most the iterations)
    uint32_t GetRxDepth() const;

    /// @return true once every size has been measured (and the peer is done with it)
    bool IsFinished() const;
    /**
     * @return the measurement of the last completed size (valid == false if none).
     *         The client measures every test; the server measures write_lat and
     *         send_lat itself and receives the client's report for the other tests,
     *         as perftest's server prints it for write_bw, read_bw and atomic_lat. (For
     *         send_bw, perftest's server prints a report from its own receive
     *         completions; this model's server shows the client's.)
     */
    IbPerftestResult GetResults() const;
    /// @return the measurements of every completed size, in order
    const std::vector<IbPerftestResult>& GetAllResults() const;

    /**
     * perftest's banner: test, connection type, depths, moderation, MTU, link type.
     * @param os where to write
     */
    void PrintTestInfo(std::ostream& os) const;
    /**
     * The column header of a report.
     * @param os where to write
     * @param bandwidth true for the bandwidth columns, false for the latency ones
     */
    static void PrintHeader(std::ostream& os, bool bandwidth);
    /**
     * One report line, in perftest's layout.
     * @param os where to write
     * @param r the measurement
     */
    static void PrintResult(std::ostream& os, const IbPerftestResult& r);

    /**
     * Bandwidth report from post and completion times, as perftest computes it.
     * @param bytes message size
     * @param tposted post time of every WR
     * @param tcompleted completion time of every signaled WR (others are ignored)
     * @param cqMod every cqMod-th WR (index cqMod - 1, 2 cqMod - 1, ...) and the last
     *        one are signaled
     * @param peak compute BW peak (perftest does up to 20000 iterations)
     * @return the measurement (test name not set)
     */
    static IbPerftestResult ComputeBandwidth(uint64_t bytes,
                                             const std::vector<Time>& tposted,
                                             const std::vector<Time>& tcompleted,
                                             uint32_t cqMod,
                                             bool peak);
    /**
     * Latency report from post times, as perftest computes it.
     * @param bytes message size
     * @param tposted post time of every iteration (at least 5)
     * @param halve divide the samples by 2 (ping-pong tests: half the round trip)
     * @return the measurement (test name not set)
     */
    static IbPerftestResult ComputeLatency(uint64_t bytes,
                                           const std::vector<Time>& tposted,
                                           bool halve);

  protected:
    void DoDispose() override;

  private:
    void StartApplication() override;
    void StopApplication() override;

    /// Parameters of one message size, agreed by both sides.
    struct SizeRun
    {
        uint64_t bytes{0};   ///< message size
        uint32_t iters{0};   ///< iterations
        uint32_t txDepth{0}; ///< outstanding WRs (bandwidth tests)
        uint32_t cqMod{1};   ///< one signaled WR in cqMod (bandwidth tests)
        uint32_t rxDepth{0}; ///< receive WRs kept posted (send tests)
    };

    /**
     * @param name the Test attribute value
     */
    void SetTestName(std::string name);
    /// @return the Test attribute value
    std::string GetTestName() const;
    /**
     * @param name the Role attribute value
     */
    void SetRoleName(std::string name);
    /// @return the Role attribute value
    std::string GetRoleName() const;
    /**
     * @param name the AtomicType attribute value
     */
    void SetAtomicTypeName(std::string name);
    /// @return the AtomicType attribute value
    std::string GetAtomicTypeName() const;

    /// Connect to the completion queues and the queue pair (idempotent).
    void Attach();
    /// Disconnect from them.
    void Detach();
    /// The peer started (or this side did): the client begins once both have.
    void TryBegin();
    /**
     * Client: start size @p index on both sides.
     * @param index position in the list of sizes
     */
    void BeginSize(uint32_t index);
    /**
     * Reset the counters for a size and post the receive WRs it needs.
     * @param run the parameters
     */
    void PrepareSize(const SizeRun& run);
    /// This side has finished the current size.
    void SideDone();
    /// Client: finish the size if both sides are done.
    void MaybeFinishSize();
    /**
     * The client's report for the server (tests the server does not measure itself).
     * @param r the measurement
     */
    void ReceivePeerResult(const IbPerftestResult& r);

    /// Post what the test allows now and detect the end of this side's work.
    void Step();
    /// Bandwidth client: post while fewer than TxDepth WRs are outstanding.
    void PumpBandwidth();
    /**
     * Post the send WR of iteration @p k.
     * @param k the iteration
     * @param signaled request a completion
     */
    void PostIteration(uint32_t k, bool signaled);
    /// Post one receive WR into the landing half of the buffer.
    void PostReceive();

    /**
     * A send completion was seen.
     * @param wc the completion
     */
    void HandleSendCompletion(const IbWorkCompletion& wc);
    /**
     * A receive completion was seen.
     * @param wc the completion
     */
    void HandleRecvCompletion(const IbWorkCompletion& wc);

    /**
     * Event mode: the send CQ's callback.
     * @param wc the completion
     */
    void SendCqCallback(const IbWorkCompletion& wc);
    /**
     * Event mode: the receive CQ's callback.
     * @param wc the completion
     */
    void RecvCqCallback(const IbWorkCompletion& wc);
    /**
     * Polling mode: a completion became visible (the CQs' Completion trace).
     * @param wc the completion
     */
    void CqActivity(const IbWorkCompletion& wc);
    /**
     * A peer message landed in memory (the queue pair's MessageReceived trace).
     * @param qpn the queue pair
     * @param kind the message kind
     * @param length bytes
     * @param addr where
     */
    void MessageLanded(uint32_t qpn, IbWrOpcode kind, uint32_t length, uint64_t addr);
    /// Polling mode: schedule a poll at the next poll instant.
    void SchedulePoll();
    /// Polling mode: poll both CQs and the landing buffer.
    void Poll();

    // Attributes
    Test m_test;                   //!< which program
    Role m_role;                   //!< client or server
    uint64_t m_size;               //!< Size (0 = perftest's default for the test)
    uint32_t m_iterations;         //!< Iterations (0 = perftest's default for the test)
    uint32_t m_txDepthAttr;        //!< TxDepth
    uint32_t m_cqModAttr;          //!< CqModeration
    uint32_t m_rxDepthAttr;        //!< RxDepth
    bool m_cqModeEvent;            //!< completions by callback instead of polling
    Time m_pollInterval;           //!< polling period (0 = continuous)
    bool m_compareSwap;            //!< atomic_lat uses CMP_AND_SWAP instead of FETCH_AND_ADD
    int64_t m_inlineAttr{-1};      //!< InlineSize (-1 = perftest's default)
    uint32_t m_inline{0};          //!< sizes up to this are posted inline (WRITE, SEND)
    std::vector<uint64_t> m_sizes; //!< SetSizes (empty: Size)

    // Resources and pairing
    Ptr<IbQueuePair> m_qp;             //!< the RC queue pair
    Ptr<IbCompletionQueue> m_sendCq;   //!< its send CQ
    Ptr<IbCompletionQueue> m_recvCq;   //!< its receive CQ
    Ptr<IbMemoryRegion> m_mr;          //!< the buffer
    uint64_t m_half;                   //!< offset of the landing half of m_mr
    IbPerftestEndpoint m_remote;       //!< the peer's endpoint
    Ptr<IbPerftestApplication> m_peer; //!< the other side
    bool m_attached;                   //!< callbacks and traces connected

    // Run state
    bool m_started;                          //!< StartApplication ran, StopApplication did not
    bool m_begun;                            //!< client: the first size has been started
    bool m_finished;                         //!< every size done
    bool m_active;                           //!< a size is running
    bool m_sideDone;                         //!< this side's work of the size is done
    uint32_t m_sizeIndex;                    //!< current size (index in GetSizes())
    SizeRun m_run;                           //!< current size parameters
    uint32_t m_scnt;                         //!< WRs posted
    uint32_t m_ccnt;                         //!< WRs completed (bw: index of last signaled + 1)
    uint32_t m_rcnt;                         //!< peer messages seen (landed or received)
    uint32_t m_landedPending;                //!< polling mode: landed, not yet seen
    uint32_t m_rposted;                      //!< receive WRs posted this size
    std::vector<Time> m_tposted;             //!< post times
    std::vector<Time> m_tcompleted;          //!< completion times (bw)
    Time m_pollOrigin;                       //!< origin of the polling grid
    EventId m_pollEvent;                     //!< pending poll
    std::vector<IbPerftestResult> m_results; //!< completed sizes

    TracedCallback<const IbPerftestResult&> m_resultTrace; //!< Result
    TracedCallback<uint32_t, uint64_t> m_postTrace;        //!< Post
};

} // namespace ns3

#endif /* IB_PERFTEST_APPLICATION_H */
