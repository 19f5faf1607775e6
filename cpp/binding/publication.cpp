// Publication (publication.hpp): the non-hot methods as ordinary pybind11 bindings; the hot
// ones (offer, offer_batch, try_claim) are raw fast methods in publication_fast.cpp.
#include "publication.hpp"
#include "local_sockaddrs.hpp"

#include "guarded_class.hpp"
#include "instance.hpp"

namespace aeron_py {

Publication::Publication(std::shared_ptr<ClientState> client, aeron_publication_t *handle)
    : client_(std::move(client)), exclusive_(false), concurrent_handle_(handle), claims_(client_) {
    init_constants();
}

Publication::Publication(std::shared_ptr<ClientState> client, aeron_exclusive_publication_t *handle)
    : client_(std::move(client)), exclusive_(true), exclusive_handle_(handle), claims_(client_) {
    init_constants();
}

void Publication::init_constants() {
    if (visit([&](auto t, auto *h) { return decltype(t)::constants(h, &constants_); }) < 0)
        throw_aeron_error(exclusive_ ? "aeron_exclusive_publication_constants" : "aeron_publication_constants");
    channel_ = constants_.channel;
}

Publication::~Publication() {
    if (!python_alive()) return;
    Section section(client_->lock.get());
    try {
        close();
    } catch (py::error_already_set &e) {
        e.discard_as_unraisable("aeron_py Publication destructor");
    } catch (const std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(nullptr);
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ error while closing a publication");
        PyErr_WriteUnraisable(nullptr);
    }
}

void Publication::check() const {
    if (closed_) throw AeronCallError("the publication is closed", EPIPE);
    client_->check_open();
}

bool Publication::is_connected() const {
    return open() && visit([](auto t, auto *h) { return decltype(t)::is_connected(h); });
}

bool Publication::is_closed() const {
    return !open() || visit([](auto t, auto *h) { return decltype(t)::is_closed(h); });
}

int64_t Publication::position() const {
    check();
    return visit([](auto t, auto *h) { return decltype(t)::position(h); });
}

int64_t Publication::position_limit() const {
    check();
    return visit([](auto t, auto *h) { return decltype(t)::position_limit(h); });
}

int64_t Publication::channel_status() const {
    check();
    return visit([](auto t, auto *h) { return decltype(t)::channel_status(h); });
}

AsyncDestination Publication::add_destination(const std::string &uri) {
    check();
    aeron_async_destination_t *async = nullptr;
    auto poll = visit([&](auto t, auto *h) {
        if (decltype(t)::add_destination(&async, client_->aeron, h, uri.c_str()) < 0)
            throw_aeron_error("aeron_publication_async_add_destination");
        return AsyncDestination::PollFn(decltype(t)::destination_poll);
    });
    return {client_, async, poll};
}

AsyncDestination Publication::remove_destination(const std::string &uri) {
    check();
    aeron_async_destination_t *async = nullptr;
    auto poll = visit([&](auto t, auto *h) {
        if (decltype(t)::remove_destination(&async, client_->aeron, h, uri.c_str()) < 0)
            throw_aeron_error("aeron_publication_async_remove_destination");
        return AsyncDestination::PollFn(decltype(t)::destination_poll);
    });
    return {client_, async, poll};
}

AsyncDestination Publication::remove_destination_by_id(int64_t destination_registration_id) {
    check();
    aeron_async_destination_t *async = nullptr;
    auto poll = visit([&](auto t, auto *h) {
        if (decltype(t)::remove_destination_by_id(&async, client_->aeron, h, destination_registration_id) < 0)
            throw_aeron_error("aeron_publication_async_remove_destination_by_id");
        return AsyncDestination::PollFn(decltype(t)::destination_poll);
    });
    return {client_, async, poll};
}

std::vector<std::string> Publication::local_sockaddrs() const {
    check();
    return read_local_sockaddrs(
        [&](aeron_iovec_t *addresses, size_t capacity) {
            return visit([&](auto t, auto *h) { return decltype(t)::local_sockaddrs(h, addresses, capacity); });
        },
        "aeron_publication_local_sockaddrs");
}

void Publication::close() {
    if (closed_) return;
    claims_.end_all(ClaimState::publication_closed);  // the log is still mapped: abort now
    closed_ = true;
    if (client_->closed) return;  // aeron_close already freed it
    if (visit([](auto t, auto *h) { return decltype(t)::close(h, nullptr, nullptr); }) < 0)
        throw_aeron_error("aeron_publication_close");
}

void Publication::revoke() {
    if (!exclusive_)
        throw py::type_error("revoke() is for an ExclusivePublication (aeron_exclusive_publication_revoke)");
    check();  // a closed publication cannot be revoked any more: raises
    claims_.end_all(ClaimState::publication_closed);
    closed_ = true;
    if (aeron_exclusive_publication_revoke(exclusive_handle_, nullptr, nullptr) < 0)
        throw_aeron_error("aeron_exclusive_publication_revoke");
}

void Publication::revoke_on_close() {
    if (!exclusive_)
        throw py::type_error("revoke_on_close() is for an ExclusivePublication "
                             "(aeron_exclusive_publication_revoke_on_close)");
    check();
    aeron_exclusive_publication_revoke_on_close(exclusive_handle_);
}

namespace {

py::object wrap(std::unique_ptr<Publication> publication) {
    const auto &registry = publication_registry();
    PyTypeObject *type = publication->exclusive() ? registry.exclusive : registry.publication;
    return instance::adopt(type, std::move(publication));
}

// _aeron._register_publication: aeron_py's public classes and error factory, so the fast
// methods raise its typed exceptions and the extension makes its public instances.
void register_publication(py::object offer_error, py::object client_closed, py::type publication,
                          py::type exclusive, py::type claim) {
    auto check_sub = [](py::type type, py::handle base, const char *what) {
        if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(type.ptr()), reinterpret_cast<PyTypeObject *>(base.ptr())))
            throw py::type_error(std::string(what) + " must subclass _aeron." +
                                 py::str(base.attr("__name__")).cast<std::string>());
    };
    check_sub(publication, py::type::of<Publication>(), "publication");
    check_sub(exclusive, py::type::of<Publication>(), "exclusive");
    check_sub(claim, py::type::of<BufferClaim>(), "claim");
    auto &r = publication_registry();
    // Strong references for the life of the process (the module never unloads).
    r.offer_error = offer_error.release().ptr();
    r.client_closed = client_closed.release().ptr();
    r.publication = reinterpret_cast<PyTypeObject *>(publication.release().ptr());
    r.exclusive = reinterpret_cast<PyTypeObject *>(exclusive.release().ptr());
    r.claim = reinterpret_cast<PyTypeObject *>(claim.release().ptr());
}

}  // namespace

py::object make_publication(const std::shared_ptr<ClientState> &client, aeron_publication_t *publication) {
    return wrap(std::make_unique<Publication>(client, publication));
}

py::object make_exclusive_publication(const std::shared_ptr<ClientState> &client,
                                      aeron_exclusive_publication_t *publication) {
    return wrap(std::make_unique<Publication>(client, publication));
}

void init_publication(py::module_ &m) {
    init_destination(m);
    init_claim(m);
    using P = Publication;
    auto cls = guarded_class<P>(m, "Publication",
                             "aeron_publication_t (thread-safe) or aeron_exclusive_publication_t (single writer).")
        .def_property_readonly("is_exclusive", &P::exclusive, "True for an aeron_exclusive_publication_t.")
        .def_property_readonly("is_connected", &P::is_connected, "aeron_publication_is_connected")
        .def_property_readonly("is_closed", &P::is_closed, "aeron_publication_is_closed")
        .def_property_readonly("position", &P::position, "aeron_publication_position")
        .def_property_readonly("position_limit", &P::position_limit, "aeron_publication_position_limit")
        .def_property_readonly("channel_status", &P::channel_status, "aeron_publication_channel_status")
        .def_property_readonly("channel", &P::channel, "aeron_publication_constants_t.channel")
        .def_property_readonly("stream_id", [](const P &p) { return p.constants().stream_id; })
        .def_property_readonly("session_id", [](const P &p) { return p.constants().session_id; })
        .def_property_readonly("registration_id", [](const P &p) { return p.constants().registration_id; })
        .def_property_readonly("original_registration_id",
                               [](const P &p) { return p.constants().original_registration_id; })
        .def_property_readonly("initial_term_id", [](const P &p) { return p.constants().initial_term_id; })
        .def_property_readonly("max_possible_position", [](const P &p) { return p.constants().max_possible_position; })
        .def_property_readonly("position_bits_to_shift",
                               [](const P &p) { return p.constants().position_bits_to_shift; })
        .def_property_readonly("term_buffer_length", [](const P &p) { return p.constants().term_buffer_length; })
        .def_property_readonly("max_message_length", [](const P &p) { return p.constants().max_message_length; })
        .def_property_readonly("max_payload_length", [](const P &p) { return p.constants().max_payload_length; })
        .def_object_member("_work", &P::work, "The owning client's do_work in conductor-invoker mode, or None.")
        .def("async_add_destination", &P::add_destination, py::arg("uri"),
             "aeron_publication_async_add_destination (MDC manual control mode).")
        .def("async_remove_destination", &P::remove_destination, py::arg("uri"),
             "aeron_publication_async_remove_destination")
        .def("async_remove_destination_by_id", &P::remove_destination_by_id, py::arg("destination_registration_id"),
             "aeron_publication_async_remove_destination_by_id: the destination the driver registered under that "
             "id (AsyncDestination.registration_id of its add).")
        .def("local_sockaddrs", &P::local_sockaddrs, "aeron_publication_local_sockaddrs (every bound address).")
        .def("close", &P::close, "aeron_publication_close; aborts pending claims first. Idempotent.")
        .def("revoke", &P::revoke,
             "aeron_exclusive_publication_revoke: close now, and end the stream for every subscriber at once "
             "(their images go, is_publication_revoked True) instead of letting them drain it; exclusive "
             "publications only (TypeError otherwise), AeronError once closed.")
        .def("revoke_on_close", &P::revoke_on_close,
             "aeron_exclusive_publication_revoke_on_close: the next close() revokes (as revoke()), e.g. when the "
             "publication is closed by a with block or its client; exclusive publications only.");
    init_publication_fast(cls.unlocked());
    m.def("_register_publication", &register_publication, py::arg("offer_error"), py::arg("client_closed"),
          py::arg("publication"), py::arg("exclusive"), py::arg("claim"),
          "Private: aeron_py registers its public publication/claim classes and typed offer errors.");

    m.attr("NOT_CONNECTED") = AERON_PUBLICATION_NOT_CONNECTED;
    m.attr("BACK_PRESSURED") = AERON_PUBLICATION_BACK_PRESSURED;
    m.attr("ADMIN_ACTION") = AERON_PUBLICATION_ADMIN_ACTION;
    m.attr("PUBLICATION_CLOSED") = AERON_PUBLICATION_CLOSED;
    m.attr("MAX_POSITION_EXCEEDED") = AERON_PUBLICATION_MAX_POSITION_EXCEEDED;
    m.attr("PUBLICATION_ERROR") = AERON_PUBLICATION_ERROR;
}

}  // namespace aeron_py
