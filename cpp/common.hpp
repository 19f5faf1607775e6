// Shared declarations of the _aeron extension: ownership state of C handles, error
// translation and the per-concept init functions. Binding code only: no policy.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "aeronc.h"
}

#include "destination.hpp"  // AsyncDestination

namespace py = pybind11;

namespace aeron_py {

// Raised (as _aeron.AeronError) when a C call fails; carries aeron_errcode()/aeron_errmsg().
class AeronCallError : public std::runtime_error {
public:
    AeronCallError(const std::string &what, int errcode) : std::runtime_error(what), errcode(errcode) {}
    int errcode;
};

// Throws AeronCallError built from aeron_errcode()/aeron_errmsg(), prefixed with the call.
[[noreturn]] void throw_aeron_error(const char *call);

// Calls a Python callable from a C callback thread; exceptions go to sys.unraisablehook.
// Returns false when the interpreter is finalizing (the call is skipped).
bool python_alive();

// A callback target kept alive until the client that may call it is closed.
struct CallbackHolder {
    py::object first;
    py::object second;
};

// An image this binding retained (aeron_subscription_image_at_index / _by_session_id).
struct ImageHandle {
    aeron_image_t *image = nullptr;
    bool released = false;
};

struct ClientState;

// Something that points into memory the client maps (a try_claim region, a zero-copy
// fragment view): told before aeron_close unmaps it, so it can make itself inert.
struct ClientDependent {
    virtual ~ClientDependent() = default;
    virtual void on_client_close() noexcept = 0;
};

// Owner of an aeron_subscription_t; images retained through it are released before close.
struct SubState {
    std::shared_ptr<ClientState> client;
    aeron_subscription_t *subscription = nullptr;
    bool closed = false;
    std::vector<std::weak_ptr<ImageHandle>> retained;

    void release_images();
    void check_open() const;
};

// Owner of an aeron_context_t + aeron_t; every handle made through it checks `closed`.
struct ClientState {
    aeron_context_t *context = nullptr;
    aeron_t *aeron = nullptr;
    bool closed = false;
    std::vector<std::unique_ptr<CallbackHolder>> holders;
    std::vector<std::weak_ptr<SubState>> subscriptions;
    std::vector<std::weak_ptr<ClientDependent>> dependents;
    size_t dependents_compact_at = 8;

    // Registers `dependent` to be told of close(); drops entries that have expired.
    void add_dependent(const std::shared_ptr<ClientDependent> &dependent);
    ~ClientState();
    void close();
    void check_open() const;
};

// Poll plumbing shared by Subscription and Image (fragment.cpp).
struct PollContext {
    PyObject *handler = nullptr;  // borrowed for the duration of one poll
    PyObject *batch = nullptr;    // list to append bytes to instead of calling a handler
    bool controlled = false;      // handler's return value is an action
    bool with_header = true;      // handler(buffer, header) or handler(buffer)
    bool failed = false;          // handler raised: error is in `error`
    py::object error_type, error_value, error_tb;
};

aeron_controlled_fragment_handler_action_t on_fragment(
    void *clientd, const uint8_t *buffer, size_t length, aeron_header_t *header);

// Wraps aeron_controlled_fragment_assembler_t: reassembles fragmented messages per session.
class FragmentAssembler {
public:
    FragmentAssembler();
    ~FragmentAssembler();
    FragmentAssembler(const FragmentAssembler &) = delete;
    FragmentAssembler &operator=(const FragmentAssembler &) = delete;
    aeron_controlled_fragment_assembler_t *assembler = nullptr;
    PollContext context;
};

// Runs `poll` (which calls aeron_*_controlled_poll with the right handler/clientd), then
// re-raises a handler's exception. The handler pointer fields of the context are set here.
int run_poll(PollContext &context, FragmentAssembler *assembler,
             const std::function<int(aeron_controlled_fragment_handler_t, void *)> &poll);

// Factories for handles made by a client (defined next to each class).
py::object make_publication(const std::shared_ptr<ClientState> &client, aeron_publication_t *publication);
py::object make_exclusive_publication(const std::shared_ptr<ClientState> &client, aeron_exclusive_publication_t *publication);
py::object make_subscription(const std::shared_ptr<ClientState> &client, aeron_subscription_t *subscription);
py::object make_image_snapshot(aeron_image_t *image);
// `check` raises when the owner (client or CnC) has been closed.
py::object make_counters_reader(py::object owner, std::function<void()> check, aeron_counters_reader_t *reader);

void init_errors(py::module_ &m);
void init_client(py::module_ &m);
void init_publication(py::module_ &m);
void init_subscription(py::module_ &m);
void init_image(py::module_ &m);
void init_fragment(py::module_ &m);
void init_driver(py::module_ &m);
void init_cnc(py::module_ &m);
void init_counters(py::module_ &m);
void init_idle(py::module_ &m);

}  // namespace aeron_py
