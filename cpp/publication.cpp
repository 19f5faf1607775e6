// Publications: aeron_publication_t (concurrent) and aeron_exclusive_publication_t share one
// template; the traits name the C functions of each. Offers are zero-copy from any
// contiguous buffer; results are returned as the C library gives them (policy is Python's).
#include "common.hpp"

namespace aeron_py {

namespace {

struct ConcurrentTraits {
    using Handle = aeron_publication_t;
    static constexpr auto offer = aeron_publication_offer;
    static constexpr auto try_claim = aeron_publication_try_claim;
    static constexpr auto is_connected = aeron_publication_is_connected;
    static constexpr auto is_closed = aeron_publication_is_closed;
    static constexpr auto constants = aeron_publication_constants;
    static constexpr auto position = aeron_publication_position;
    static constexpr auto position_limit = aeron_publication_position_limit;
    static constexpr auto channel_status = aeron_publication_channel_status;
    static constexpr auto close = aeron_publication_close;
    static constexpr auto add_destination = aeron_publication_async_add_destination;
    static constexpr auto remove_destination = aeron_publication_async_remove_destination;
    static constexpr auto local_sockaddrs = aeron_publication_local_sockaddrs;
    static constexpr auto destination_poll = aeron_publication_async_destination_poll;
    using Constants = aeron_publication_constants_t;
};

struct ExclusiveTraits {
    using Handle = aeron_exclusive_publication_t;
    static constexpr auto offer = aeron_exclusive_publication_offer;
    static constexpr auto try_claim = aeron_exclusive_publication_try_claim;
    static constexpr auto is_connected = aeron_exclusive_publication_is_connected;
    static constexpr auto is_closed = aeron_exclusive_publication_is_closed;
    static constexpr auto constants = aeron_exclusive_publication_constants;
    static constexpr auto position = aeron_exclusive_publication_position;
    static constexpr auto position_limit = aeron_exclusive_publication_position_limit;
    static constexpr auto channel_status = aeron_exclusive_publication_channel_status;
    static constexpr auto close = aeron_exclusive_publication_close;
    static constexpr auto add_destination = aeron_exclusive_publication_async_add_destination;
    static constexpr auto remove_destination = aeron_exclusive_publication_async_remove_destination;
    static constexpr auto local_sockaddrs = aeron_exclusive_publication_local_sockaddrs;
    static constexpr auto destination_poll = aeron_exclusive_publication_async_destination_poll;
    using Constants = aeron_publication_constants_t;
};

// aeron_buffer_claim_t: a writable window into the log, valid until commit or abort.
class BufferClaim {
public:
    explicit BufferClaim(const aeron_buffer_claim_t &claim) : claim_(claim) {
        view_ = py::reinterpret_steal<py::object>(
            PyMemoryView_FromMemory(reinterpret_cast<char *>(claim_.data), static_cast<Py_ssize_t>(claim_.length),
                                    PyBUF_WRITE));
        if (!view_) throw py::error_already_set();
    }

    py::object data() {
        check();
        return view_;
    }
    size_t length() const { return claim_.length; }
    bool done() const { return done_; }

    void commit() { finish(aeron_buffer_claim_commit, "aeron_buffer_claim_commit"); }
    void abort() { finish(aeron_buffer_claim_abort, "aeron_buffer_claim_abort"); }

private:
    void check() const {
        if (done_) throw AeronCallError("this buffer claim was already committed or aborted", EINVAL);
    }

    void finish(int (*call)(aeron_buffer_claim_t *), const char *name) {
        check();
        done_ = true;
        // Invalidate the view first so no Python code can write into the log afterwards.
        py::object release_error;
        try {
            view_.attr("release")();
        } catch (py::error_already_set &e) {
            release_error = e.value();
        }
        view_ = py::none();
        if (call(&claim_) < 0) throw_aeron_error(name);
        if (release_error) {
            PyErr_SetString(PyExc_BufferError,
                            "a view of the claimed buffer was still exported when the claim ended; "
                            "write into claim.data only inside the claim");
            throw py::error_already_set();
        }
    }

    aeron_buffer_claim_t claim_;
    py::object view_;
    bool done_ = false;
};

struct BufferView {
    Py_buffer view{};
    explicit BufferView(PyObject *object) {
        if (PyObject_GetBuffer(object, &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
    }
    ~BufferView() { PyBuffer_Release(&view); }
};

template <typename Traits>
class Publication {
public:
    using Handle = typename Traits::Handle;

    Publication(std::shared_ptr<ClientState> client, Handle *handle) : client_(std::move(client)), handle_(handle) {
        if (Traits::constants(handle_, &constants_) < 0) throw_aeron_error("aeron_publication_constants");
        channel_ = constants_.channel;
    }

    ~Publication() {
        if (python_alive()) close();
    }

    int64_t offer(py::handle buffer) {
        if (!open()) return AERON_PUBLICATION_CLOSED;  // as the C client answers for a closed publication
        BufferView view(buffer.ptr());
        return Traits::offer(handle_, static_cast<const uint8_t *>(view.view.buf), static_cast<size_t>(view.view.len),
                             nullptr, nullptr);
    }

    // Offers each buffer of a sequence in turn (aeron_publication_offer per item) until one is
    // not accepted. Returns (number offered, last result): one call instead of one per message.
    py::tuple offer_batch(py::sequence buffers) {
        if (!open()) return py::make_tuple(0, AERON_PUBLICATION_CLOSED);
        const Py_ssize_t size = PySequence_Size(buffers.ptr());
        int64_t result = 0;
        Py_ssize_t offered = 0;
        for (; offered < size; offered++) {
            py::object item = py::reinterpret_steal<py::object>(PySequence_GetItem(buffers.ptr(), offered));
            if (!item) throw py::error_already_set();
            BufferView view(item.ptr());
            result = Traits::offer(handle_, static_cast<const uint8_t *>(view.view.buf),
                                   static_cast<size_t>(view.view.len), nullptr, nullptr);
            if (result < 0) break;
        }
        return py::make_tuple(offered, result);
    }

    py::tuple try_claim(size_t length) {
        if (!open()) return py::make_tuple(AERON_PUBLICATION_CLOSED, py::none());
        aeron_buffer_claim_t claim{};
        const int64_t result = Traits::try_claim(handle_, length, &claim);
        if (result < 0) return py::make_tuple(result, py::none());
        return py::make_tuple(result, BufferClaim(claim));
    }

    bool is_connected() { return open() && Traits::is_connected(handle_); }
    bool is_closed() { return !open() || Traits::is_closed(handle_); }
    int64_t position() {
        check();
        return Traits::position(handle_);
    }
    int64_t position_limit() {
        check();
        return Traits::position_limit(handle_);
    }
    int64_t channel_status() {
        check();
        return Traits::channel_status(handle_);
    }

    AsyncDestination add_destination(const std::string &uri) {
        check();
        aeron_async_destination_t *async = nullptr;
        if (Traits::add_destination(&async, client_->aeron, handle_, uri.c_str()) < 0)
            throw_aeron_error("aeron_publication_async_add_destination");
        return {client_, async, Traits::destination_poll};
    }

    AsyncDestination remove_destination(const std::string &uri) {
        check();
        aeron_async_destination_t *async = nullptr;
        if (Traits::remove_destination(&async, client_->aeron, handle_, uri.c_str()) < 0)
            throw_aeron_error("aeron_publication_async_remove_destination");
        return {client_, async, Traits::destination_poll};
    }

    std::vector<std::string> local_sockaddrs() {
        check();
        aeron_iovec_t addresses[16];
        char storage[16][AERON_CLIENT_MAX_LOCAL_ADDRESS_STR_LEN];
        for (int i = 0; i < 16; i++) {
            addresses[i].iov_base = reinterpret_cast<uint8_t *>(storage[i]);
            addresses[i].iov_len = sizeof storage[i];
        }
        const int count = Traits::local_sockaddrs(handle_, addresses, 16);
        if (count < 0) throw_aeron_error("aeron_publication_local_sockaddrs");
        return std::vector<std::string>(storage, storage + std::min(count, 16));
    }

    void close() {
        if (closed_) return;
        closed_ = true;
        if (client_->closed) return;  // aeron_close already freed it
        if (Traits::close(handle_, nullptr, nullptr) < 0) throw_aeron_error("aeron_publication_close");
    }

    const typename Traits::Constants &constants() const { return constants_; }
    const std::string &channel() const { return channel_; }

private:
    bool open() const { return !closed_ && !client_->closed; }
    void check() const {
        if (closed_) throw AeronCallError("the publication is closed", EPIPE);
        client_->check_open();
    }

    std::shared_ptr<ClientState> client_;
    Handle *handle_;
    typename Traits::Constants constants_{};
    std::string channel_;
    bool closed_ = false;
};

template <typename Traits>
void bind_publication(py::module_ &m, const char *name, const char *doc) {
    using P = Publication<Traits>;
    py::class_<P>(m, name, doc)
        .def("offer", &P::offer, py::arg("buffer"),
             "aeron_publication_offer: the new position (>0) or a negative result code. Zero-copy.")
        .def("offer_batch", &P::offer_batch, py::arg("buffers"),
             "aeron_publication_offer for each buffer until one fails: (offered, last result).")
        .def("try_claim", &P::try_claim, py::arg("length"),
             "aeron_publication_try_claim: (result, BufferClaim or None).")
        .def_property_readonly("is_connected", &P::is_connected, "aeron_publication_is_connected")
        .def_property_readonly("is_closed", &P::is_closed, "aeron_publication_is_closed")
        .def_property_readonly("position", &P::position, "aeron_publication_position")
        .def_property_readonly("position_limit", &P::position_limit, "aeron_publication_position_limit")
        .def_property_readonly("channel_status", &P::channel_status, "aeron_publication_channel_status")
        .def_property_readonly("channel", &P::channel)
        .def_property_readonly("stream_id", [](const P &p) { return p.constants().stream_id; })
        .def_property_readonly("session_id", [](const P &p) { return p.constants().session_id; })
        .def_property_readonly("registration_id", [](const P &p) { return p.constants().registration_id; })
        .def_property_readonly("original_registration_id",
                               [](const P &p) { return p.constants().original_registration_id; })
        .def_property_readonly("initial_term_id", [](const P &p) { return p.constants().initial_term_id; })
        .def_property_readonly("max_possible_position",
                               [](const P &p) { return p.constants().max_possible_position; })
        .def_property_readonly("position_bits_to_shift",
                               [](const P &p) { return p.constants().position_bits_to_shift; })
        .def_property_readonly("term_buffer_length", [](const P &p) { return p.constants().term_buffer_length; })
        .def_property_readonly("max_message_length", [](const P &p) { return p.constants().max_message_length; })
        .def_property_readonly("max_payload_length", [](const P &p) { return p.constants().max_payload_length; })
        .def("async_add_destination", &P::add_destination, py::arg("uri"),
             "aeron_publication_async_add_destination (MDC manual control mode).")
        .def("async_remove_destination", &P::remove_destination, py::arg("uri"),
             "aeron_publication_async_remove_destination")
        .def("local_sockaddrs", &P::local_sockaddrs, "aeron_publication_local_sockaddrs")
        .def("close", &P::close, "aeron_publication_close; idempotent.");
}

}  // namespace

py::object make_publication(const std::shared_ptr<ClientState> &client, aeron_publication_t *publication) {
    return py::cast(new Publication<ConcurrentTraits>(client, publication), py::return_value_policy::take_ownership);
}

py::object make_exclusive_publication(const std::shared_ptr<ClientState> &client,
                                      aeron_exclusive_publication_t *publication) {
    return py::cast(new Publication<ExclusiveTraits>(client, publication), py::return_value_policy::take_ownership);
}

void init_publication(py::module_ &m) {
    py::class_<BufferClaim>(m, "BufferClaim", "aeron_buffer_claim_t")
        .def_property_readonly("data", &BufferClaim::data, "Writable memoryview of the claimed space.")
        .def_property_readonly("length", &BufferClaim::length)
        .def_property_readonly("done", &BufferClaim::done)
        .def("commit", &BufferClaim::commit, "aeron_buffer_claim_commit")
        .def("abort", &BufferClaim::abort, "aeron_buffer_claim_abort");
    py::class_<AsyncDestination>(m, "AsyncDestination", "aeron_async_destination_t")
        .def("poll", &AsyncDestination::poll, "aeron_*_async_destination_poll: True when done.");
    bind_publication<ConcurrentTraits>(m, "Publication", "aeron_publication_t (thread-safe).");
    bind_publication<ExclusiveTraits>(m, "ExclusivePublication", "aeron_exclusive_publication_t (single writer).");

    m.attr("NOT_CONNECTED") = AERON_PUBLICATION_NOT_CONNECTED;
    m.attr("BACK_PRESSURED") = AERON_PUBLICATION_BACK_PRESSURED;
    m.attr("ADMIN_ACTION") = AERON_PUBLICATION_ADMIN_ACTION;
    m.attr("PUBLICATION_CLOSED") = AERON_PUBLICATION_CLOSED;
    m.attr("MAX_POSITION_EXCEEDED") = AERON_PUBLICATION_MAX_POSITION_EXCEEDED;
    m.attr("PUBLICATION_ERROR") = AERON_PUBLICATION_ERROR;
}

}  // namespace aeron_py
