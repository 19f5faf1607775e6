// Fragments: the C fragment handler that calls Python (PyObject_Vectorcall, no allocation for
// the header), reassembly (aeron_controlled_fragment_assembler_*), argument parsing for the
// fast poll methods, and the end-of-poll work (deferred closes). Payloads reach Python as
// `bytes` copies by default; with zero_copy=True as a read-only memoryview of the log that
// is dead (it and every slice raise ValueError) once the handler returns.
#include "poll.hpp"

#include <cstring>

#include "dead_view.hpp"
#include "fastcall.hpp"
#include "header_view.hpp"
#include "tricks.hpp"

extern "C" {
#include "aeron_image.h"  // aeron_header_t's fields
#include "protocol/aeron_udp_protocol.h"
}

namespace aeron_py {

namespace {

// Moves the pending Python exception into the context (re-raised by run_poll).
void capture_error(PollContext *context) {
    context->failed = true;
    PyErr_Fetch(&context->error_type, &context->error_value, &context->error_tb);
}

bool stopped(const PollContext *context) {
    return context->failed || context->sub->closed || context->sub->client->closed ||
           (context->image != nullptr && context->image->released);
}

constexpr Py_ssize_t kMaxCachedPayload = 64 * 1024;

// The fragment as bytes. The bytes handed to the previous handler call are rewritten in
// place when only this cache still holds them (the handler let go) and the length is the
// same: nobody can see the change, as CPython itself does when it resizes or appends to a
// string it holds the only reference to. Otherwise a new bytes object (then cached).
// AERON_PY_NO_TRICKS (tricks.hpp): always a new bytes object, none cached.
PyObject *fragment_bytes(PyObject *&cache, const uint8_t *buffer, Py_ssize_t size) {
#if AERON_PY_CPYTHON_RECYCLING  // layouts checked on CPython 3.11 to 3.13 and 3.13t
    if (!tricks::on())
        return PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), size);
    if (cache != nullptr && tricks::sole_reference(cache) && PyBytes_GET_SIZE(cache) == size) {
        std::memcpy(PyBytes_AS_STRING(cache), buffer, static_cast<size_t>(size));
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
        reinterpret_cast<PyBytesObject *>(cache)->ob_shash = -1;  // the cached hash was of the old content
        _Pragma("GCC diagnostic pop")
        return Py_NewRef(cache);
    }
#endif
    PyObject *fresh = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), size);
    // 0 and 1 bytes are shared singletons; a large message is not kept alive between polls.
    if (fresh != nullptr && size > 1 && size <= kMaxCachedPayload) Py_XSETREF(cache, Py_NewRef(fresh));
    return fresh;
}

// The fragment as a read-only memoryview of the log: the previous one revived when the
// handler let go of it (dead_view::revive), else a new one (then cached).
// AERON_PY_NO_TRICKS (or a CPython whose layouts were not checked): a new view over a
// private copy of the fragment, none cached.
PyObject *fragment_view(PyObject *&cache, const uint8_t *buffer, Py_ssize_t size) {
    auto *data = const_cast<uint8_t *>(buffer);
#if AERON_PY_CPYTHON_LAYOUTS
    if (tricks::on()) {
        if (cache != nullptr && dead_view::revive(cache, data, size)) return Py_NewRef(cache);
        PyObject *fresh = dead_view::make(data, size, false);
        if (fresh != nullptr) Py_XSETREF(cache, Py_NewRef(fresh));
        return fresh;
    }
#endif
    (void)cache;
    return dead_view::make_copy(data, size, false);
}

// The end of a zero-copy handler call under AERON_PY_NO_TRICKS: memoryview.release() on the
// view (over a private copy). A raw export of it still held makes the poll raise BufferError,
// as with the tricks on; the handler's own exception, when it raised, wins.
void release_fragment_view(PyObject *data, PyObject *&result) noexcept {
    if (result == nullptr) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (!dead_view::release(data)) PyErr_Clear();
        PyErr_Restore(type, value, tb);
        return;
    }
    if (dead_view::release(data)) return;
    Py_CLEAR(result);
    if (PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_BufferError, "zero-copy fragment view: a buffer export of it outlived the handler call");
    }
}

}  // namespace

aeron_controlled_fragment_handler_action_t on_fragment(void *clientd, const uint8_t *buffer, size_t length,
                                                       aeron_header_t *header) {
    auto *context = static_cast<PollContext *>(clientd);
    // Closed from the handler (or another thread) during this poll: leave the rest in the log.
    if (stopped(context)) return AERON_ACTION_ABORT;
    const auto size = static_cast<Py_ssize_t>(length);
    if (context->batch != nullptr) {
        PyObject *data = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(buffer), size);
        if (data == nullptr) {
            capture_error(context);
            return AERON_ACTION_ABORT;
        }
        const int rc = PyList_Append(context->batch, data);
        Py_DECREF(data);
        if (rc == 0) return AERON_ACTION_CONTINUE;
        capture_error(context);
        return AERON_ACTION_ABORT;
    }
    PyObject *data = context->zero_copy ? fragment_view(context->view, buffer, size)
                                        : fragment_bytes(context->payload, buffer, size);
    if (data == nullptr) {
        capture_error(context);
        return AERON_ACTION_ABORT;
    }
    PyObject *argv[3] = {nullptr, data, nullptr};
    size_t nargs = 1;
    if (context->with_header) {
        argv[2] = header_view_bind(context->header_view, header, context->sub->client->lock.get());
        if (argv[2] == nullptr) {
            Py_DECREF(data);
            capture_error(context);
            return AERON_ACTION_ABORT;
        }
        nargs = 2;
    }
    PyObject *result = PyObject_Vectorcall(context->handler, argv + 1, nargs | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    if (context->zero_copy && !tricks::layouts_on()) {
        release_fragment_view(data, result);
    } else if (context->zero_copy) {
        // A raw buffer export (numpy.frombuffer, ...) would keep a pointer into the log past the
        // call: say so rather than let it read whatever the log holds later.
        if (result != nullptr && dead_view::exported(data)) {
            Py_CLEAR(result);
            PyErr_SetString(PyExc_BufferError,
                            "zero-copy fragment view: a buffer export of it outlived the handler call");
        }
        dead_view::kill(data);
    }
    Py_DECREF(data);
    if (context->with_header) header_view_unbind(context->header_view);
    if (result != nullptr) {
        aeron_controlled_fragment_handler_action_t action = AERON_ACTION_CONTINUE;
        if (context->controlled && result != Py_None) {
            const long value = PyLong_AsLong(result);
            if (value >= AERON_ACTION_ABORT && value <= AERON_ACTION_CONTINUE) {
                action = static_cast<aeron_controlled_fragment_handler_action_t>(value);
            } else {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_ValueError, "controlled fragment handler returned %ld, not an Action", value);
                Py_DECREF(result);
                result = nullptr;
            }
        }
        if (result != nullptr) {
            Py_DECREF(result);
            return action;
        }
    }
    // The handler raised: this fragment counts as delivered, polling stops (BREAK), and the
    // exception is re-raised by run_poll. Later fragments stay in the log for the next poll.
    capture_error(context);
    return AERON_ACTION_BREAK;
}

aeron_controlled_fragment_handler_action_t on_message_fragment(void *clientd, const uint8_t *buffer, size_t length,
                                                               aeron_header_t *header) {
    // The flags test of aeron_controlled_fragment_assembler_handler (aeron_header_t as the
    // pinned client's aeron_image.h defines it)
    // AERON_PY_NO_TRICKS: every frame through Aeron's reassembler, which reads the flags itself.
    constexpr uint8_t unfragmented = AERON_DATA_HEADER_UNFRAGMENTED;
    if (tricks::on() && (header->frame->frame_header.flags & unfragmented) == unfragmented)
        return on_fragment(clientd, buffer, length, header);
    return aeron_controlled_fragment_assembler_handler(static_cast<PollContext *>(clientd)->assembler, buffer, length,
                                                       header);
}

Poller::Poller() {
    if (aeron_controlled_fragment_assembler_create(&assembler, on_fragment, &context) < 0)
        throw_aeron_error("aeron_controlled_fragment_assembler_create");
    context.assembler = assembler;
}

Poller::~Poller() {
    if (assembler != nullptr) aeron_controlled_fragment_assembler_delete(assembler);
    if (python_alive()) {
        Py_CLEAR(context.header_view);
        Py_CLEAR(context.payload);
        Py_CLEAR(context.view);
        Py_CLEAR(context.error_type);
        Py_CLEAR(context.error_value);
        Py_CLEAR(context.error_tb);
    }
}

bool parse_poll_args_by_name(const char *function, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             bool batch, long default_limit, PollArgs &out) {
    static const char *const handler_names[] = {"handler", "fragment_limit", "zero_copy", "with_header"};
    static const char *const batch_names[] = {"fragment_limit"};
    long limit;
    if (batch) {
        fast::FastArgs<1> parsed(function, batch_names);
        if (!parsed.parse(args, nargs, kwnames, 0) || !parsed.get_long(0, default_limit, limit)) return false;
    } else {
        fast::FastArgs<4> parsed(function, handler_names);
        if (!parsed.parse(args, nargs, kwnames, 1) || !parsed.get_long(1, default_limit, limit)) return false;
        out.handler = parsed.get(0);
        if (!PyCallable_Check(out.handler)) {
            PyErr_Format(PyExc_TypeError, "%s(): handler must be callable, not %s", function,
                         Py_TYPE(out.handler)->tp_name);
            return false;
        }
        for (size_t i = 2; i < 4; i++) {
            PyObject *flag = parsed.get(i);
            if (flag == nullptr) continue;
            const int truth = PyObject_IsTrue(flag);
            if (truth < 0) return false;
            (i == 2 ? out.zero_copy : out.with_header) = truth != 0;
        }
    }
    if (limit < 0 || limit > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s(): fragment_limit must be between 0 and %d, got %ld", function,
                     INT32_MAX, limit);
        return false;
    }
    out.fragment_limit = limit;
    return true;
}

void throw_reentrant_poll(const char *call) {
    PyErr_Format(PyExc_RuntimeError,
                 "%s: this subscription (or one of its images) is already being polled (re-entrant poll from a "
                 "handler, or a poll from another thread)",
                 call);
    throw py::error_already_set();
}

void finish_deferred_closes(SubState &sub) noexcept {
    ClientState &client = *sub.client;
    const bool sub_work = sub.polling == 0 && (sub.close_pending || !sub.release_pending.empty());
    const bool client_work = client.polling == 0 && client.close_pending;
    if (!sub_work && !client_work) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (sub_work) sub.finish_deferred();
    if (client_work) client.finish_deferred();
    PyErr_Restore(type, value, tb);
}

void init_fragment(py::module_ &m) {
    init_header(m);
    m.attr("ACTION_ABORT") = static_cast<int>(AERON_ACTION_ABORT);
    m.attr("ACTION_BREAK") = static_cast<int>(AERON_ACTION_BREAK);
    m.attr("ACTION_COMMIT") = static_cast<int>(AERON_ACTION_COMMIT);
    m.attr("ACTION_CONTINUE") = static_cast<int>(AERON_ACTION_CONTINUE);
}

}  // namespace aeron_py
