// Poll machinery shared by Subscription and Image: the fragment handler that calls Python
// (fragment.cpp), one reassembler per polled object, and run_poll, which guards a poll:
// no re-entrant poll of a subscription (or of one of its images), closes requested during
// the poll run after it, a handler's exception is re-raised.
#pragma once

#include "common.hpp"
#include "fastcall.hpp"

namespace aeron_py {

enum class PollMode { HANDLER, CONTROLLED, BATCH };

// State of the poll in progress, shared with the C fragment handler through `clientd`.
struct PollContext {
    SubState *sub = nullptr;
    ImageHandle *image = nullptr;     // set when polling one image
    PyObject *handler = nullptr;      // borrowed for the duration of one poll
    PyObject *batch = nullptr;        // list to append bytes to instead of calling a handler
    bool controlled = false;          // handler's return value is an action
    bool with_header = true;          // handler(data, header) or handler(data)
    bool zero_copy = false;           // data is a memoryview dead after the call
    PyObject *header_view = nullptr;  // owned; reused while nobody else holds it
    PyObject *payload = nullptr;      // owned: the last bytes handed out, rewritten while nobody else holds it
    PyObject *view = nullptr;         // owned: the last zero-copy view, revived while nobody else holds it
    bool failed = false;              // the handler raised: the error is below
    PyObject *error_type = nullptr, *error_value = nullptr, *error_tb = nullptr;
    aeron_controlled_fragment_assembler_t *assembler = nullptr;  // the poller's, for on_message_fragment
};

aeron_controlled_fragment_handler_action_t on_fragment(
    void *clientd, const uint8_t *buffer, size_t length, aeron_header_t *header);

// on_fragment for a message in one frame, the context's reassembler for a frame of a larger
// message (which hands the whole message to on_fragment): what the reassembler itself does,
// without its call for every unfragmented message. `clientd` is the PollContext.
aeron_controlled_fragment_handler_action_t on_message_fragment(
    void *clientd, const uint8_t *buffer, size_t length, aeron_header_t *header);

// The poll machinery of one Subscription or Image: its context and its reassembler
// (aeron_controlled_fragment_assembler_t delivering to on_fragment with &context).
class Poller {
public:
    Poller();
    ~Poller();
    Poller(const Poller &) = delete;
    Poller &operator=(const Poller &) = delete;
    PollContext context;
    aeron_controlled_fragment_assembler_t *assembler = nullptr;
};

// Arguments of poll / controlled_poll / poll_fragments / poll_batch.
struct PollArgs {
    PyObject *handler = nullptr;
    long fragment_limit = 10;
    bool zero_copy = false;
    bool with_header = true;
};

// The general parser of parse_poll_args (keywords, flags, every error message).
bool parse_poll_args_by_name(const char *function, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             bool batch, long default_limit, PollArgs &out);

// Parses (handler, fragment_limit=default_limit, zero_copy=False, with_header=True), or
// (fragment_limit=default_limit) when `batch`. False with a Python error set. The common
// call, poll(handler) or poll(handler, n) with a valid small int, is decided inline.
inline bool parse_poll_args(const char *function, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            bool batch, long default_limit, PollArgs &out) {
    const Py_ssize_t npos = PyVectorcall_NARGS(nargs);
    long limit = default_limit;
    // The callable test is PyCallable_Check inlined (the type's tp_call slot), or the function
    // itself under AERON_PY_NO_TRICKS.
    if (!batch && kwnames == nullptr && (npos == 1 || (npos == 2 && fast::small_int(args[1], limit))) &&
        limit >= 0 && limit <= INT32_MAX &&
        (tricks::on() ? Py_TYPE(args[0])->tp_call != nullptr : PyCallable_Check(args[0]) != 0)) {
        out.handler = args[0];
        out.fragment_limit = limit;
        return true;
    }
    return parse_poll_args_by_name(function, args, nargs, kwnames, batch, default_limit, out);
}

// The SubState of `object` when it is a Subscription (or a Python subclass of it), else
// false without an error set (subscription.cpp; used by PollSet).
bool subscription_state(PyObject *object, std::shared_ptr<SubState> &out);

// Raised for a poll started while the same subscription (or one of its images) is polling.
[[noreturn]] void throw_reentrant_poll(const char *call);

// Runs the deferred closes of `sub` and its client once no poll is running; keeps a pending
// Python exception intact. Failures go to sys.unraisablehook.
void finish_deferred_closes(SubState &sub) noexcept;

// After every poll: the common case (nothing deferred) inline, the rest out of line.
inline void finish_poll(SubState &sub) noexcept {
    if (sub.close_pending || !sub.release_pending.empty() || sub.client->close_pending)
        finish_deferred_closes(sub);
}

// A new reference to the int `count` (>= 0): CPython's shared small ints without a call
// for the usual poll results, PyLong_FromLong above them.
inline PyObject *small_count(int count) {
    static PyObject *const *const table = [] {
        static PyObject *ints[257];
        for (int i = 0; i <= 256; i++) ints[i] = PyLong_FromLong(i);  // shared, never freed
        return ints;
    }();
    return count <= 256 ? Py_NewRef(table[count]) : PyLong_FromLong(count);
}

// The result of a poll that read nothing: 0, or an empty list for BATCH.
inline PyObject *empty_poll_result(PollMode mode) { return mode == PollMode::BATCH ? PyList_New(0) : small_count(0); }

// One poll. `poll(handler, clientd)` calls aeron_{subscription,image}_controlled_poll.
// Returns a new reference (the count, or the list for BATCH), or nullptr with an error set.
template <typename Poll>
PyObject *run_poll(SubState &sub, ImageHandle *image, Poller &poller, PollMode mode, const PollArgs &args,
                   bool reassemble, const char *call, Poll &&poll) {
    if (sub.polling > 0) throw_reentrant_poll(call);
    // Counted before anything can run Python: the batch list's allocation may run the cycle
    // collector (CPython 3.11 collects inside allocations), whose finalizers may switch
    // threads; a poll of this subscription from another thread must find it counted.
    sub.polling++;
    sub.client->polling++;
    PollContext &context = poller.context;
    context.sub = &sub;
    context.image = image;
    context.handler = args.handler;
    context.controlled = mode == PollMode::CONTROLLED;
    context.with_header = args.with_header;
    context.zero_copy = args.zero_copy;
    context.failed = false;
    PyObject *batch = nullptr;
    if (mode == PollMode::BATCH) {
        batch = PyList_New(0);
        if (batch == nullptr) {
            sub.polling--;
            sub.client->polling--;
            context.handler = nullptr;
            finish_poll(sub);  // a finalizer may have closed it meanwhile
            return nullptr;
        }
    }
    context.batch = batch;
    const size_t limit = static_cast<size_t>(args.fragment_limit);
    const int count = poll(reassemble ? on_message_fragment : on_fragment, &context, limit);
    sub.polling--;
    sub.client->polling--;
    context.handler = nullptr;
    context.batch = nullptr;
    finish_poll(sub);
    if (context.failed) {
        Py_XDECREF(batch);
        context.failed = false;
        PyErr_Restore(context.error_type, context.error_value, context.error_tb);
        context.error_type = context.error_value = context.error_tb = nullptr;
        return nullptr;
    }
    if (count < 0) {
        Py_XDECREF(batch);
        throw_aeron_error(call);
    }
    return batch != nullptr ? batch : small_count(count);
}

}  // namespace aeron_py
