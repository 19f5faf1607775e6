// Client counters: aeron_counter_t (aeron_async_add_counter, aeron_async_add_static_counter,
// aeron_counter_addr, aeron_counter_constants, aeron_counter_is_closed, aeron_counter_close).
// The value lives in the driver's CnC counters buffer, mapped by the client: every access checks
// the counter and its client are open first (under the GIL, as is every close), so no access
// ever reaches memory aeron_close unmapped or a counter aeron_counter_close freed.
#include "common.hpp"
#include "guarded_class.hpp"

namespace aeron_py {

namespace {

class ClientCounter {
public:
    ClientCounter(std::shared_ptr<ClientState> client, aeron_counter_t *counter)
        : client_(std::move(client)), counter_(counter) {
        if (aeron_counter_constants(counter_, &constants_) < 0) throw_aeron_error("aeron_counter_constants");
    }
    ~ClientCounter() {
        if (!python_alive()) return;
        Section section(client_->lock.get());
        try {
            close();
        } catch (...) {
        }
    }
    ClientCounter(const ClientCounter &) = delete;
    ClientCounter &operator=(const ClientCounter &) = delete;

    int64_t get() const { return __atomic_load_n(addr(), __ATOMIC_ACQUIRE); }
    void set(int64_t value) { __atomic_store_n(addr(), value, __ATOMIC_RELEASE); }
    int64_t increment(int64_t delta) { return __atomic_add_fetch(addr(), delta, __ATOMIC_SEQ_CST); }
    bool compare_and_set(int64_t expected, int64_t update) {
        return __atomic_compare_exchange_n(addr(), &expected, update, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    bool is_closed() const { return closed_ || client_->closed || aeron_counter_is_closed(counter_); }
    void close() {
        if (closed_) return;
        closed_ = true;
        if (client_->closed) return;  // aeron_close freed it
        if (aeron_counter_close(counter_, nullptr, nullptr) < 0) throw_aeron_error("aeron_counter_close");
    }
    const aeron_counter_constants_t &constants() const { return constants_; }
    friend PyObject *section_lock(const ClientCounter &counter) { return counter.client_->lock.get(); }

private:
    int64_t *addr() const {
        if (closed_) throw AeronCallError("the counter is closed", EPIPE);
        client_->check_open();
        if (aeron_counter_is_closed(counter_)) throw AeronCallError("the counter was closed by its owner", EPIPE);
        return aeron_counter_addr(counter_);
    }

    std::shared_ptr<ClientState> client_;
    aeron_counter_t *counter_;
    aeron_counter_constants_t constants_{};
    bool closed_ = false;
};

}  // namespace

py::object make_client_counter(const std::shared_ptr<ClientState> &client, aeron_counter_t *counter) {
    return py::cast(std::make_unique<ClientCounter>(client, counter));
}

void init_client_counter(py::module_ &m) {
    guarded_class<ClientCounter>(m, "ClientCounter",
                              "aeron_counter_t: a counter this client allocated in the driver's CnC file (seen by "
                              "every reader of it, e.g. python -m aeron_py.stat). Closed with its client.")
        .def_property("value", &ClientCounter::get, &ClientCounter::set,
                      "The counter's value (an acquire load; set: a release store).")
        .def("increment", &ClientCounter::increment, py::arg("delta") = 1,
             "Add delta atomically; returns the new value.")
        .def("compare_and_set", &ClientCounter::compare_and_set, py::arg("expected"), py::arg("update"),
             "Set to update if it is expected (atomically); whether it did.")
        .def_property_readonly("counter_id", [](const ClientCounter &c) { return c.constants().counter_id; },
                               "aeron_counter_constants_t.counter_id: its slot in the CnC file")
        .def_property_readonly("registration_id",
                               [](const ClientCounter &c) { return c.constants().registration_id; },
                               "aeron_counter_constants_t.registration_id")
        .def_property_readonly("is_closed", &ClientCounter::is_closed, "aeron_counter_is_closed")
        .def("close", &ClientCounter::close, "aeron_counter_close; idempotent.");
}

}  // namespace aeron_py
