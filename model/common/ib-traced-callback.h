/*
 * SPDX-License-Identifier: GPL-2.0-only
 */

#ifndef IB_TRACED_CALLBACK_H
#define IB_TRACED_CALLBACK_H

#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>

namespace ns3
{

/**
 * @ingroup infiniband-common
 * @brief A TracedCallback that keeps a bit of its owner's mask set while anything is
 * connected to it.
 *
 * A model that fires a trace source per packet first asks whether anything listens;
 * TracedCallback::IsEmpty answers from the callback list inside the trace source, one
 * cache line per source, cold on a large fabric where a port is visited once per packet.
 * With this class the owner tests one word of its own hot state instead: the trace
 * source sets or clears its bit whenever a callback is connected or disconnected
 * (through the attribute system, Config::Connect, TraceConnect... all of which end in
 * the four methods below). Everything else is TracedCallback's.
 */
template <typename... Ts>
class IbTracedCallback : public TracedCallback<Ts...>
{
  public:
    /**
     * Keep @p bit of @p *mask equal to "something is connected".
     * @param mask the owner's mask (must outlive this object: a member of the same owner)
     * @param bit the bit of this trace source
     */
    void Watch(uint16_t* mask, uint16_t bit)
    {
        m_mask = mask;
        m_bit = bit;
        Update();
    }

    /**
     * @copydoc TracedCallback::ConnectWithoutContext
     */
    void ConnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::ConnectWithoutContext(callback);
        Update();
    }

    /**
     * @copydoc TracedCallback::Connect
     */
    void Connect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Connect(callback, path);
        Update();
    }

    /**
     * @copydoc TracedCallback::DisconnectWithoutContext
     */
    void DisconnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::DisconnectWithoutContext(callback);
        Update();
    }

    /**
     * @copydoc TracedCallback::Disconnect
     */
    void Disconnect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Disconnect(callback, path);
        Update();
    }

  private:
    /// Set or clear the bit from the callback list.
    void Update()
    {
        if (m_mask != nullptr)
        {
            *m_mask =
                static_cast<uint16_t>(this->IsEmpty() ? (*m_mask & ~m_bit) : (*m_mask | m_bit));
        }
    }

    uint16_t* m_mask{nullptr}; //!< the owner's mask
    uint16_t m_bit{0};         //!< this source's bit in it
};

} // namespace ns3

#endif /* IB_TRACED_CALLBACK_H */
