// Shared declarations of the _aeron extension: ownership state of C handles, error
// translation and the per-concept init functions. Binding code only: no policy.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

extern "C" {
#include "aeronc.h"
}

#include "destination.hpp"  // AsyncDestination
#include "gil.hpp"          // ReleasedGil: every wait without the GIL
#include "section.hpp"      // Section: one client's calls one at a time without the GIL

namespace py = pybind11;

namespace aeron_py {

// Raised (as _aeron.AeronError, or the subclass its codes select: errors.cpp) when a C call
// fails; carries aeron_errcode()/aeron_errmsg(). `cause` is set by a caller that knows the
// failure's real cause when the C code does not say it (an archive connect's "connect
// timeout" is -1: the binding sets ETIMEDOUT); unset, errors.cpp reads it from the message.
class AeronCallError : public std::runtime_error {
public:
    AeronCallError(const std::string &what, int errcode) : std::runtime_error(what), errcode(errcode) {}
    AeronCallError(const std::string &what, int errcode, int cause)
        : std::runtime_error(what), errcode(errcode), cause(cause), has_cause(true) {}
    int errcode;
    int cause = 0;
    bool has_cause = false;
};

// Throws AeronCallError built from aeron_errcode()/aeron_errmsg(), prefixed with the call.
[[noreturn]] void throw_aeron_error(const char *call);

// False while the interpreter is finalizing: Python objects must not be touched then.
bool python_alive();

// What aeron_image_constants says about an image, copied (no pointer into the client).
struct ImageConstants {
    std::string source_identity;
    int64_t correlation_id = 0;
    int64_t join_position = 0;
    size_t term_buffer_length = 0;
    size_t mtu_length = 0;
    int32_t session_id = 0;
    int32_t initial_term_id = 0;
    bool publication_revoked = false;  // read when the snapshot is taken (an unavailable image's reason)
};

// One thing the client conductor thread reported: an error, or an image that became
// available / unavailable on a subscription.
// An error frame a receiver sent for one of this client's publications (copied from
// aeron_publication_error_values_t on the conductor thread).
struct PublicationErrorFrame {
    int64_t registration_id = 0;
    int64_t destination_registration_id = 0;
    int32_t session_id = 0;
    int32_t stream_id = 0;
    int64_t receiver_id = 0;
    int64_t group_tag = 0;
    std::string source;  // "address:port" of the receiver, "" when unknown
    int32_t error_code = 0;
};

struct ClientEvent {
    enum Kind {
        ERROR,
        IMAGE_AVAILABLE,
        IMAGE_UNAVAILABLE,
        PUBLICATION_ERROR,
        COUNTER_AVAILABLE,
        COUNTER_UNAVAILABLE,
        NEW_PUBLICATION,
        NEW_EXCLUSIVE_PUBLICATION,
        NEW_SUBSCRIPTION
    } kind = ERROR;
    int errcode = 0;
    std::string message;  // ERROR: the client's; PUBLICATION_ERROR: the receiver's; NEW_*: the channel
    int64_t subscription_id = 0;  // registration id of the subscription (image events)
    int64_t registration_id = 0;  // COUNTER_* and NEW_*: the resource's registration (correlation) id
    int32_t counter_id = 0;       // COUNTER_*
    int32_t stream_id = 0;        // NEW_*
    int32_t session_id = 0;       // NEW_PUBLICATION, NEW_EXCLUSIVE_PUBLICATION
    ImageConstants image;
    PublicationErrorFrame frame;
};

// Events queued by the conductor thread, which never takes the GIL: it only locks `mutex`
// for a push. The Python side takes them (EventQueue::take) and calls the callbacks;
// `mutex` is never held while Python runs. Lives as long as its ClientState, which
// outlives aeron_close (the last moment the conductor can push).
class EventQueue {
public:
    // Conductor thread. Never throws (an event that cannot be stored is counted as lost).
    void push(ClientEvent &&event) noexcept;
    // Waits (GIL released by the caller) up to `timeout_s` for events or close; then
    // moves them out. Returns false once closed and empty.
    bool wait_and_take(double timeout_s, std::vector<ClientEvent> &out);
    void close() noexcept;
    void lose() noexcept { lost_.fetch_add(1, std::memory_order_relaxed); }
    uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }

private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<ClientEvent> events_;
    bool closed_ = false;
    std::atomic<uint64_t> lost_{0};
};

// A subscription's image callbacks, kept from its async add until it is closed.
struct ImageCallbacks {
    py::object on_available;
    py::object on_unavailable;
};

// An image this binding retained (aeron_subscription_image_at_index / _by_session_id).
struct ImageHandle {
    aeron_image_t *image = nullptr;
    // By the user (the C release may be deferred while polling). Written in the client's Section;
    // atomic because a PollSet reads it in its own (drop_dead).
    std::atomic<bool> released{false};
};

struct ClientState;

// Something that points into memory the client maps (a try_claim region, a zero-copy
// fragment view): told before aeron_close unmaps it, so it can make itself inert.
struct ClientDependent {
    virtual ~ClientDependent() = default;
    virtual void on_client_close() noexcept = 0;
};

// Owner of an aeron_subscription_t; images retained through it are released before close.
// While a poll of the subscription or of one of its images runs (`polling`), closing it
// or releasing one of its images only marks them; the C calls run when the poll returns.
struct SubState {
    std::shared_ptr<ClientState> client;
    aeron_subscription_t *subscription = nullptr;
    int64_t registration_id = 0;
    // No further calls (closed by the user or with the client). Written under the GIL; atomic
    // because ReplayMerge reads it with the GIL released (archive/replay_merge.cpp).
    std::atomic<bool> closed{false};
    bool close_pending = false;  // aeron_subscription_close deferred until the poll returns
    int polling = 0;
    const void *claimed_by = nullptr;  // the PollSet whose poll counts in `polling` (it may count twice)
    std::unordered_set<std::shared_ptr<ImageHandle>> retained;
    std::vector<std::shared_ptr<ImageHandle>> release_pending;

    void retain(const std::shared_ptr<ImageHandle> &handle);
    void release(const std::shared_ptr<ImageHandle> &handle);  // deferred while polling
    void release_images() noexcept;
    void close();                  // deferred while polling
    void finish_deferred() noexcept;  // after the last poll returned
    void check_open() const;
};

// The lock object of a Section (section.hpp): a bare `object()` of its own, of which only the
// per-object mutex is used. A client has one (ClientState::lock) for itself and everything it
// made; a standalone object (a driver with its context, a CnC file) has its own.
class SectionLock {
public:
    SectionLock() : object_(py::reinterpret_steal<py::object>(PyObject_CallNoArgs(reinterpret_cast<PyObject *>(&PyBaseObject_Type)))) {
        if (!object_) throw py::error_already_set();
    }
    ~SectionLock() {
        if (!python_alive()) object_.release();  // Python objects must not be touched now
    }
    SectionLock(const SectionLock &) = delete;
    SectionLock &operator=(const SectionLock &) = delete;
    PyObject *get() const { return object_.ptr(); }
    const py::object &object() const { return object_; }

private:
    py::object object_;
};

// Owner of an aeron_context_t + aeron_t; every handle made through it checks `closed`.
// close() during a poll (from a handler or another thread) is deferred until the poll returns.
struct ClientState {
    // Every call on the client, or on what it made, runs in a critical section on it.
    SectionLock lock;
    aeron_context_t *context = nullptr;
    aeron_t *aeron = nullptr;
    // Written in the client's Section; atomic because a PollSet reads it in its own (drop_dead).
    std::atomic<bool> closed{false};
    bool close_pending = false;
    int polling = 0;
    EventQueue events;
    py::object error_handler;
    py::object publication_error_handler;  // error frames for this client's publications
    py::object counter_handler;   // (available, registration_id, counter_id): counters appearing and going
    py::object resource_handler;  // (kind, channel, stream_id, session_id, registration_id): new pubs and subs
    std::unordered_map<int64_t, ImageCallbacks> image_callbacks;  // by subscription registration id
    std::unordered_map<int64_t, std::weak_ptr<SubState>> subscriptions;
    std::vector<std::weak_ptr<ClientDependent>> dependents;
    size_t dependents_compact_at = 8;

    // Registers `dependent` to be told of close(); drops entries that have expired.
    void add_dependent(const std::shared_ptr<ClientDependent> &dependent);
    ~ClientState();
    void close();
    void finish_deferred() noexcept;
    void check_open() const;
    // Calls the Python callbacks for queued events (GIL held); waits up to timeout_s first.
    bool deliver_events(double timeout_s);

private:
    void close_now() noexcept;
};

// The state of a _aeron.Client (or a subclass): TypeError (pybind11's cast_error) for anything else.
std::shared_ptr<ClientState> client_state_of(py::handle client);

// Factories for handles made by a client (defined next to each class).
py::object make_publication(const std::shared_ptr<ClientState> &client, aeron_publication_t *publication);
py::object make_exclusive_publication(const std::shared_ptr<ClientState> &client, aeron_exclusive_publication_t *publication);
py::object make_subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription);
py::object make_image_snapshot(const ImageConstants &constants);
py::object make_client_counter(const std::shared_ptr<ClientState> &client, aeron_counter_t *counter);
// `check` raises when the owner (client or CnC) has been closed; every call runs in a Section
// on `lock` (the client's, or the CnC's own object).
py::object make_counters_reader(py::object owner, py::object lock, std::function<void()> check,
                                aeron_counters_reader_t *reader);

void init_errors(py::module_ &m);
void init_client(py::module_ &m);
void init_client_counter(py::module_ &m);
void init_publication(py::module_ &m);
void init_subscription(py::module_ &m);
void init_image(py::module_ &m);
void init_fragment(py::module_ &m);
void init_driver(py::module_ &m);
void init_cnc(py::module_ &m);
void init_counters(py::module_ &m);
void init_idle(py::module_ &m);

}  // namespace aeron_py
